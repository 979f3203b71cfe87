"""Loading a partition directory and recovering it after an unclean shutdown (log_loader.py)."""
