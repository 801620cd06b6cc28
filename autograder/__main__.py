from autograder.cli import program

program()
