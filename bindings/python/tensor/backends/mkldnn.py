"""torch.backends.mkldnn (oneDNN): not used by this library; ``enabled`` is a settable
attribute that changes nothing."""

__all__ = ["is_available", "enabled"]

enabled = True


def is_available():
    return False
