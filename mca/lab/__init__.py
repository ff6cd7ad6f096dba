"""The lab kit: the 14 checks, seeded fixture variants, student exercises, grading."""
