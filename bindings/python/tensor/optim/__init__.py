"""tensor.optim: torch.optim over tensor.h's optimizers (C section 13).

SGD, Adam, AdamW, RMSprop, Adagrad, Adadelta, Adamax, NAdam, RAdam and LBFGS with
PyTorch's constructor signatures; the update runs in C. ``lr_scheduler`` has the
learning-rate schedulers.
"""
from . import lr_scheduler  # noqa: F401
from .optimizer import (Optimizer, SGD, Adam, AdamW, RMSprop, Adagrad, Adadelta, Adamax, NAdam, RAdam,  # noqa: F401
                        LBFGS)

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "Adamax", "NAdam", "RAdam",
           "LBFGS", "lr_scheduler"]
