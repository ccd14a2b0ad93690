"""State dicts and safetensors."""
