"""What a hand-in printed or raised, explained to the student: output that is not theirs left out."""

from grader.intake.explain import without_noise


def test_torchs_own_start_up_noise_is_not_the_students_output():
    noise = "[W123 cpuinfo.cpp:10] Error in cpuinfo: failed to parse processor information from /proc/cpuinfo\n"
    assert without_noise(noise + "mine\n") == "mine"
    assert without_noise("Error in cpuinfo: failed\nmine") == "mine"
