"""What the runner reads from a failed call without the sandbox: the constructor call as the student writes it, and
torch's error for a mask made for a longer block."""

from grader.module.runner import call_text, not_cut


def test_the_call_names_only_the_options_the_constructor_takes():
    spec = {"dropout_milli": 200, "block_size": 16}
    assert call_text(16, 4, spec, ("d_model", "n_heads", "dropout", "block_size")) == \
        "MultiHeadAttention(16, 4, dropout=0.2, block_size=16)"
    assert call_text(16, 4, spec, ("d_model", "n_heads")) == "MultiHeadAttention(16, 4)"
    assert call_text(8, 2, {"block_size": 12}, ("block_size", "dropout")) == "MultiHeadAttention(8, 2, block_size=12)"


def test_a_mask_not_cut_is_a_size_error_between_the_sequence_and_a_longer_block():
    error = "The size of tensor a (16) must match the size of tensor b (3) at non-singleton dimension 3"
    assert not_cut(error, 3)
    assert not not_cut(error, 16)  # the longer side is the sequence: not a mask made for block_size
    assert not not_cut(error, 5)  # neither side is the sequence
    assert not not_cut("shape '[1, 3]' is invalid for input of size 16", 3)
