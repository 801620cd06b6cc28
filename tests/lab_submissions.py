"""The submissions with known grades of every lab, by lab id."""

import lab1_submissions
import lab2_submissions
import lab3_submissions
import lab4_collectives_submissions

CASES_BY_LAB = {
    "lab1_distributed_arrays": lab1_submissions.CASES,
    "lab2_three_ways": lab2_submissions.CASES,
    "lab3_fsdp_tp": lab3_submissions.CASES,
    "lab4_collectives": lab4_collectives_submissions.CASES,
}
