"""Question 2's optional model: the course's sizes and the parameter counts it allows."""

from pathlib import Path

from grader.module.contract import COURSE_MODEL
from grader.module.model_checks import allowed_counts


def test_the_course_sizes_are_the_models_and_its_parameter_counts_are_allowed():
    from mha import schema
    from mha.model import GPT
    from mha.schema import model_config

    course = schema.load(Path(__file__).resolve().parents[3] / "params.yaml")
    config = model_config(course)
    assert (COURSE_MODEL.vocab_size, COURSE_MODEL.block_size, COURSE_MODEL.n_embd, COURSE_MODEL.n_layer,
            COURSE_MODEL.n_head) == (config.vocab_size, config.block_size, config.n_embd, config.n_layer,
                                     config.n_head)
    for positions in ("learned", "sinusoidal", "none"):
        assert GPT(model_config(course, positions=positions)).num_parameters() in allowed_counts()
    assert GPT(model_config(course, n_layer=3)).num_parameters() not in allowed_counts()
    assert GPT(model_config(course, n_embd=96, n_head=2)).num_parameters() not in allowed_counts()
