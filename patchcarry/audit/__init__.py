"""The retention audit: what a model keeps between iterations and who holds it."""
