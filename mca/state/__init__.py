"""What mca keeps under $MCA_HOME and reads back: saved conversations, the log,
crash reports, and the checks every record read back goes through."""
