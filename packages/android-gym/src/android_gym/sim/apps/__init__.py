"""Built-in simulated apps: each module defines ``@register_app`` classes; the phone imports them all."""
