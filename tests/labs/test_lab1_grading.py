"""Lab 1's graded submissions (graded once per session by the ``lab_grades`` fixture), beyond the
scores every lab is tested for in test_lab_grades.py."""

from grading_session import assert_layout_failure_explained


def test_picture_failure_names_the_picture_not_the_spec(lab_grades):
    result = lab_grades("lab1_distributed_arrays")[1]["replicated_instead_of_sharded"]
    (check,) = [c for t in result.tasks if t.task == "t2" for c in t.checks if not c.passed]
    assert "picture C" in check.message and "P(" not in check.message
    assert_layout_failure_explained(result, check.name)


def test_t4_reads_the_added_arrays_whatever_function_added_them():
    """The error names the function that added the two (add, a jitted lambda, however this JAX version
    writes it) and its argument names: t4 reads only the shapes and the devices."""
    from autograder.labs.lab1_distributed_arrays.reference import error_arguments

    for function, first, second in (
        ("add", "x", "y"),
        ("<lambda>", "a", "b"),
        ("jit(<lambda>)", "a", "b"),
        ("<lambda>.<locals>.<lambda>", "u", "v"),
        ("add", "args[0]", "args[1]"),
    ):
        message = (
            f"Received incompatible devices for jitted computation. Got argument {first} of {function} with shape"
            " float32[1024,1024] and with device ids [0] on platform CPU and argument"
            f" {second} of {function} with shape float32[1024,1024] and with device ids [1] on platform CPU"
        )
        assert error_arguments(message) == [("float32[1024,1024]", (0,)), ("float32[1024,1024]", (1,))], function
    sharded = "with shape float32[1024,1024] and with device ids [0, 1, 2, 3] on platform CPU"
    assert error_arguments(sharded) == [("float32[1024,1024]", (0, 1, 2, 3))]
