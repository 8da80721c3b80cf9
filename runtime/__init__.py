"""What a process runs with: its settings from the environment, its MongoDB client, and the
embedded database that `make run`, the tests and the benchmark start."""
