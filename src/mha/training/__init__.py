"""Training a model: the trainer (trainer), its optimizers (optimizers), learning-rate schedule (schedule),
weights' moving average (average) and the step recorded as a CUDA graph (cuda_graph).

Imports run one way: schedule, optimizers and average import nothing of each other; cuda_graph imports none of
them; trainer imports them all. Only mha.schema (TrainConfig) comes from outside.
"""
