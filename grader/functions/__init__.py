"""Question 1: the seven functions a student writes, judged case by case.

``contract`` names them, their tests, the mistakes the grader can name and the public seed (standard library
only: what the rest of the grader imports to name a function); ``cases`` draws the inputs from a student's seed;
``checks`` judges one case into data, within ``grader.tolerance``; ``mistakes`` names mistakes from the evidence
of the failing cases; ``attribution`` says when a function fails only through a failing helper; ``run`` grades
one submission. How an outcome of the sandbox is worded is shared with question 2 (``grader.outcome_messages``).
"""
