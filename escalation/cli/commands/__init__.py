"""Subcommands of the ``escalation`` command line; each module has ``register(app, study_app)``."""
