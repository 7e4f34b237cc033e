"""tensor.nn: torch.nn over tensor.h.

Module, Parameter, the layers, losses and containers are Python classes (torch 1.13's
behaviour and reprs) whose forward calls the C functional ops in ``functional``;
``init``, ``utils`` and ``parallel`` are torch.nn.init, torch.nn.utils and
torch.nn.parallel (DataParallel on one device). The recurrent layers,
MultiheadAttention and the Transformer layers (``rnn_modules``) own Python Parameters and
drive the C modules' forwards with them.
"""
from . import functional, init, parallel, utils  # noqa: F401
from .parameter import Parameter  # noqa: F401
from .module import Module  # noqa: F401
from .container import Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict  # noqa: F401
from .layers import *  # noqa: F401,F403
from .loss import *  # noqa: F401,F403
from .layers_more import *  # noqa: F401,F403
from .rnn_modules import *  # noqa: F401,F403
from .parallel import DataParallel, DistributedDataParallel  # noqa: F401
from .layers import __all__ as _layers_all
from .loss import __all__ as _loss_all
from .layers_more import __all__ as _more_all
from .rnn_modules import __all__ as _rnn_all

__all__ = (["functional", "init", "parallel", "utils", "Parameter", "Module", "Sequential", "ModuleList", "ModuleDict",
            "ParameterList", "ParameterDict", "DataParallel", "DistributedDataParallel"] + list(_layers_all) + list(_loss_all)
           + list(_rnn_all) + list(_more_all))
from . import modules  # noqa: E402,F401  (after every class it names)
