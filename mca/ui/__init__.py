"""What a person sees: the REPL, -p, rendering (diffs, plans, ledgers), the terminal pieces.

Nothing in here is imported by the loop (agent, tools, models, skills): the face talks to
the session through events, text deltas and approval questions.
"""
