from grader.module import layouts
from mha import worked_example


def course_weights() -> layouts.CourseWeights:
    """The worked example's weights, as question 2's layouts place them."""
    ex = worked_example.load()
    return layouts.CourseWeights(list(ex.W_Q), list(ex.W_K), list(ex.W_V), ex.W_O)
