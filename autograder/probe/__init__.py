"""Code that runs inside the student's kernel: the device setup check and the fact probe."""
