"""neml2: author material models, compile them with AOTInductor, and load either kind.

``neml2.load_model(path, name)`` returns the eager model of a model ``.i`` or the
compiled graphs behind an ``AOTIModel`` stub; ``neml2-compile`` writes the stubs.
"""

from .errors import HitError, InputError, Neml2Error
from .shim import CompiledModel, load_model

__version__ = "0.1.0"

__all__ = ["CompiledModel", "HitError", "InputError", "Neml2Error", "__version__", "load_model"]
