"""tinygrad.engine: only the module paths tinygrad's tests import from."""
