"""Set-up scripts of the machine and the GPU check, and the label comparison the GPU check runs."""
