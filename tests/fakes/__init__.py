"""Stand-ins for services outside the machine (the LLM endpoint), stubbed at their network boundary."""
