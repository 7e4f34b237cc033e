"""tensor.nn: torch.nn over tensor.h.

Module, Parameter, the layers, losses and containers are Python classes (torch 1.13's
behaviour and reprs) whose forward calls the C functional ops in ``functional``;
``init`` and ``utils`` are torch.nn.init and torch.nn.utils. Recurrent layers,
MultiheadAttention and the Transformer layers are not here yet (their C modules are
being written); they are absent rather than half-present.
"""
from . import functional, init, utils  # noqa: F401
from .parameter import Parameter  # noqa: F401
from .module import Module  # noqa: F401
from .container import Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict  # noqa: F401
from .layers import *  # noqa: F401,F403
from .loss import *  # noqa: F401,F403
from .layers import __all__ as _layers_all
from .loss import __all__ as _loss_all

__all__ = (["functional", "init", "utils", "Parameter", "Module", "Sequential", "ModuleList", "ModuleDict",
            "ParameterList", "ParameterDict"] + list(_layers_all) + list(_loss_all))
