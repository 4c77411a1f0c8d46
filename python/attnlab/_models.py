"""Models: attnlab.model, attnlab.load, attnlab.construct, attnlab.list_models."""
import contextlib

from . import _attnlab
from ._checks import finite, finite_result, flag, integer, largest
from ._feedback import Progress, progress_wanted
from ._util import norm_params, schema_text


def list_models():
    """Every model with its [model] and [train] keys, as `attnlab list models` prints them.

    Returns:
        dict: model name -> {"description": str, "params": [...], "train_params": [...],
        "fresh_samples": bool}; each parameter a dict with "name", "type", "default",
        "help", "choices", "min", "max". "train_params" starts with `n`, which every model has.
    """
    return _attnlab.list_models()


def _inputs(where, X):
    """(X, constants) from an array, or from a dict returned by attnlab.sample(); every float
    entry finite (ValueError naming `where` and the array)."""
    constants = {}
    if isinstance(X, dict):
        names = X.get("meta", {}).get("constants", [])
        X, constants = X["X"], {k: X[k] for k in names if k in X}
    finite(where, "X", X)
    for k, v in constants.items():
        finite(where, f"constant '{k}'", v)
    return X, constants


def _overflow(X):
    """The cause named when a result of finite inputs X is not finite."""
    return f"X's largest |entry| is {largest(X)}: scale X down"


_FIT_PROGRESS_DELAY = 1.0  # seconds a fit runs before its steps are shown (short fits: silent)


@contextlib.contextmanager
def _steps_bar(name, progress):
    """The callable a fit hands its steps to (None: no progress), closed after the fit."""
    want = progress_wanted(flag(f"fit of {name}", "progress", progress, True))
    bar = Progress(f"fit {name}", want, unit="step", delay=_FIT_PROGRESS_DELAY)
    try:
        yield bar.update if want else None
    finally:
        bar.close()


class Model:
    """One attnlab model: create it with attnlab.model(), attnlab.load() or attnlab.construct().

    Arrays are (n, T, d_in) inputs and (n, T_out, d_out) targets, float64 (float32 and
    non-contiguous arrays are accepted and converted once). Long computations release the
    GIL, and Ctrl-C stops a gradient fit between steps (KeyboardInterrupt; the model is then
    unfitted).

    Attributes:
        name (str): registry name, e.g. "rfa".
        seed (int): seed of the model's random draws (frozen weights, initialisation).
        params (dict): every resolved [model] key.
        train_params (dict or None): every resolved [train] key of the last fit.
        shape (dict or None): {"T", "d_in", "T_out", "d_out"} of the training data.
        fitted (bool): whether predict() can run.
        log (dict): what the last fit reported: {"scalars": {name: value} (e.g. lambda,
            param_count), "series": {name: (steps, values)} (e.g. val_loss, val_mse)}.
        metadata (dict): a loaded file's __metadata__ (empty otherwise).
    """

    def __init__(self, core):
        self._core = core

    name = property(lambda self: self._core.name)
    seed = property(lambda self: self._core.seed)
    params = property(lambda self: self._core.params)
    train_params = property(lambda self: self._core.train_params)
    shape = property(lambda self: self._core.shape)
    fitted = property(lambda self: self._core.fitted)
    log = property(lambda self: self._core.log)
    metadata = property(lambda self: self._core.metadata)

    def __repr__(self):
        state = f"fitted on {self.shape}" if self.fitted else "not fitted"
        return f"<attnlab.Model {self.name} seed={self.seed} {state}>"

    def fit(self, X, Y, progress=None, **train):
        """Fits the model on (X, Y), like `attnlab fit MODEL --in DATA.npz --set train.KEY=VALUE`.

        Args:
            X: inputs, (n, T, d_in); n >= 1.
            Y: targets, (n, T_out, d_out).
            **train: [train] keys of this model (list_models()[name]["train_params"]), e.g.
                lambdas=np.logspace(-8, 0, 17), val_fraction=0.2 for the ridge models, or
                steps=2000, lr=1e-3, batch=256 for the gradient-trained ones. `n` defaults
                to every sample of X; a smaller n fits the first n.
            progress: a gradient fit's steps as a bar (tqdm, else a line every 10 s on stderr)
                once it has run for a second; None: on unless ATTNLAB_NO_PROGRESS is set.
                Ridge fits show none.

        Returns:
            self (so that `m = attnlab.model("rfa").fit(X, Y)` works).

        Raises:
            ValueError: bad arrays or parameters, or a fit that cannot work on this data
                (e.g. "training diverged at step ..."); the CLI's one-line messages.
            KeyboardInterrupt: Ctrl-C during a gradient fit; the model is left unfitted.
        """
        finite("fit(X, Y)", "X", X)
        finite("fit(X, Y)", "Y", Y)
        with _steps_bar(self.name, progress) as bar:
            self._core.fit(X=X, Y=Y, train=norm_params("train", train), progress=bar)
        return self

    def fit_task(self, task, task_params=None, eval_first=1_000_000_000, progress=None, **train):
        """Fits on a task's samples 0 .. n-1 drawn with the model's seed, as one run of
        `attnlab run` does (its test set is then attnlab.sample(task, n=eval.n,
        seed=model.seed, first=eval_first, **task_params)).

        Args:
            task (str): task name, e.g. "qsa".
            task_params (dict): task keys, e.g. {"N": 16, "q": 2}.
            eval_first (int): the first test sample index (eval.first, default 10^9); no
                training sample reaches it.
            **train: [train] keys; n (default 1000) is the training-set size, and n = 0
                draws fresh samples every step (gradient-trained models, as in specs).

        Returns:
            self. The task's dataset constants are kept for predict/attention/evaluate.
        """
        with _steps_bar(self.name, progress) as bar:
            self._core.fit_task(task=task, task_params=norm_params("task", task_params or {}),
                                train=norm_params("train", train),
                                eval_first=integer("fit_task", "eval_first", eval_first),
                                progress=bar)
        return self

    def predict(self, X):
        """Predictions for X, (n, T, d_in) -> (n, T_out, d_out) float64 (a new array owning C++
        memory, not a copy). With n = 0 the result is empty. Bit for bit what `attnlab predict`
        writes for the same fitted model and inputs.

        X may also be a dict returned by attnlab.sample(): its "X" is used together with the
        task's dataset constants (e.g. the Match tasks' modulus, which constructions read)."""
        X, constants = _inputs("predict(X)", X)
        return finite_result("predict(X)", "pred",
                             self._core.predict(X=X, constants=constants), _overflow(X))

    def attention(self, X):
        """Attention probabilities of an attention model for X (n, T, d_in), n >= 1 (or a
        dict from attnlab.sample()).

        Returns:
            dict name -> array, as `attnlab predict` writes them ("attention.<name>"):
            "layer0" (n, H, T, T) for `attention` (row i: how token i attends to every
            token), one "layer<l>" per layer for `transformer`, "layer0.first" /
            "layer0.second" (n, H, T, T) marginals for `third_order`; constructions give
            one "head<k>" (n, N, N) per head (third order: (n, N, N*N)).

        Raises:
            ValueError: the model is not fitted or has no attention (e.g. rfa, mlp), a NaN/inf
                in X, or attention that overflows double precision.
        """
        X, constants = _inputs("attention(X)", X)
        maps = self._core.attention(X=X, constants=constants)
        for name, a in maps.items():
            finite_result("attention(X)", name, a, _overflow(X))
        return maps

    def evaluate(self, X, Y=None):
        """The model's own diagnostics on a test set, as a sweep records them after the
        standard metrics (Model::evaluate): e.g. a construction's m, heads, margin_min,
        beta_max and bits_needed; a ridge model's test error along its λ path (series,
        labelled oracle; not after load()).

        Args:
            X: (n, T, d_in) inputs, or a dict from attnlab.sample() (then Y defaults to its
                "Y" and its dataset constants are used).
            Y: (n, T_out, d_out) targets.

        Returns:
            dict: {"scalars": {name: value}, "series": {name: (steps, values)}}.
        """
        if isinstance(X, dict) and Y is None:
            Y = X["Y"]
        X, constants = _inputs("evaluate(X, Y)", X)
        finite("evaluate(X, Y)", "Y", Y)
        return self._core.evaluate(X=X, Y=Y, constants=constants)

    def features(self, X):
        """Frozen random features of rfa, brfa or rfmlp for X, like `attnlab features`.

        Needs no fit: the weights are drawn from (params, seed) and X's shape, exactly as
        fit() draws them.

        Args:
            X: (n, T, d_in) rf_target-style inputs (row 0 the query, rows 1..N the keys).

        Returns:
            dict: "W" (M, e, e) for rfa/brfa (e = d_in + 1 with augment) or "w" (width, D)
            for rfmlp, and "Phi" (n, P) float64: rfa/brfa head-major, Phi[:, m*e + k].

        Raises:
            ValueError: a NaN/inf in X, or features that overflow double precision (e.g. X
                near 1e200), naming the place and the cause.
            KeyboardInterrupt: Ctrl-C (acted on within a few tenths of a second).
        """
        finite("features(X)", "X", X)
        out = self._core.features(X=X)
        for name, a in out.items():
            finite_result("features(X)", name, a, _overflow(X))
        return out

    def save(self, path):
        """Saves the fitted model as safetensors (FILE.safetensors), the layout of
        `attnlab fit --save` (docs/models.md §4); `attnlab predict --model FILE` and
        attnlab.load(FILE) read it. OSError for file problems, ValueError for a model that
        cannot be saved yet."""
        self._core.save(path=str(path))

    def export_gpt2(self, path):
        """Writes a fitted `gpt2` model as a GPT-2 checkpoint (FILE.safetensors with GPT-2's tensor
        names, docs/models.md "GPT-2 checkpoints"), as `attnlab export-gpt2`; attnlab.load(FILE)
        predicts bit for bit what this model does. ValueError for another model or settings GPT-2
        has no counterpart for (positions other than learned, causal = false, bits > 0)."""
        self._core.export_gpt2(path=str(path))


def model(name, seed=0, **params):
    """A new, unfitted model from the registry, like `[model] name = ...` in a spec.

    Args:
        name (str): registry name (list_models()): mean, linear, rfa, brfa, rfmlp,
            rfa_kernel, brfa_kernel, rfmlp_kernel, attention, third_order, transformer,
            mlp, lstm (and construction, when built in).
        seed (int): seed of the model's random draws (default 0), as `attnlab fit --seed`
            and a spec's run seed.
        **params: [model] keys with the names and defaults of `attnlab list models`,
            e.g. heads=512, activation="relu" (rfa) or m=16, heads=1 (attention).
            [train] keys go to Model.fit().

    Returns:
        Model. Call .fit(X, Y, **train) before .predict(X).

    Raises:
        ValueError: unknown model or key (with a did-you-mean), wrong type or range.
    """
    return Model(_attnlab.ModelCore(name=name, seed=integer("model", "seed", seed),
                                    params=norm_params("model", params)))


def load(path):
    """Loads a model saved by Model.save() or `attnlab fit --save` (safetensors), or a GPT-2
    checkpoint whose metadata has n_head (load_gpt2 for the others).

    The model is rebuilt from the file's name, params, seed and shape, its frozen weights
    are checked bit for bit, and it predicts exactly what the saved model predicted.

    Raises:
        OSError: the file cannot be read; ValueError: not an attnlab model, or altered.
    """
    return Model(_attnlab.ModelCore.load(path=str(path)))


def load_gpt2(path, heads=0, T=0, T_out=0, dtype=""):
    """Loads a GPT-2 checkpoint (safetensors with GPT-2's tensor names wte.weight, wpe.weight,
    h.<l>.attn.c_attn.weight, ..., optionally prefixed "transformer.") as a `gpt2` model.

    Args:
        heads (int): n_head; 0 reads the file's metadata "n_head" (no tensor shows it).
        T (int): sequence length, the first T rows of wpe; 0: all of them.
        T_out (int): outputs per sequence, T or 1; 0: T.
        dtype (str): "float32" or "float64"; "": float64 iff every tensor is F64.

    Returns:
        Model (fitted): predict() gives the softmax of the logits at each position.

    Raises:
        OSError: the file cannot be read; ValueError: a missing tensor, a wrong shape or dtype.
    """
    core = _attnlab.ModelCore.import_gpt2(
        path=str(path), heads=integer("load_gpt2", "heads", heads), T=integer("load_gpt2", "T", T),
        T_out=integer("load_gpt2", "T_out", T_out), dtype=str(dtype))
    return Model(core)


# Constructions whose task is not a prefix of their name (docs/constructions.md).
_CONSTRUCTION_TASKS = {
    "smallm_match3": "match3",
    "local_match3": "match3_local",
    "adjacent_match3": "match3_adjacent",
    "pointer_match3": "match3_pointer",
}


def _task_for(construction, tasks):
    """The task a construction is for: its entry in _CONSTRUCTION_TASKS, else the longest task
    name that prefixes its name."""
    if construction in _CONSTRUCTION_TASKS:
        return _CONSTRUCTION_TASKS[construction]
    best = None
    for t in tasks:
        if (construction == t or construction.startswith(t + "_")) and (best is None or len(t) > len(best)):
            best = t
    return best


def construct(name, task=None, shape=None, seed=0, **params):
    """An explicit construction (no training): model("construction", construction=name, ...)
    fitted on no data.

    The model needs the task's shapes: they come from `task` (default: the task whose name
    prefixes the construction's, e.g. "qsa" for "qsa_random_codes", "match3" for
    "match3_third_order") built with the task keys among **params, or from an explicit
    `shape=(T, d_in, T_out, d_out)`. Each keyword goes to every place that has such a key:
    the construction model's [model] keys (e.g. bits), the task's keys (e.g. N, q), else the
    model's [train] keys.

    Args:
        name (str): construction name, e.g. "qsa_random_codes", "match2_trig".
        task (str, optional): task name; default inferred from `name`.
        shape (tuple, optional): (T, d_in, T_out, d_out), instead of a task.
        seed (int): seed of the construction's random draws (e.g. random codes).
        **params: model, task or train keys, e.g. N=64, q=4, bits=8.

    Returns:
        Model, fitted: predict(X) and attention(X) work on the task's inputs.

    Raises:
        ValueError: this attnlab has no `construction` model yet, an unknown construction,
            or a key that neither the model nor the task has.
    """
    models = _attnlab.list_models()
    if "construction" not in models:
        raise ValueError("attnlab.construct: this attnlab has no 'construction' model in its "
                         "registry (see attnlab.list_models()); rebuild attnlab with the explicit "
                         "constructions (src/constructions/) to use them")
    info = models["construction"]
    model_keys = {p["name"] for p in info["params"]}
    train_keys = {p["name"] for p in info["train_params"]}
    tasks = _attnlab.list_tasks()
    if task is None and shape is None:
        task = _task_for(name, tasks)
        if task is None:
            raise ValueError(f"attnlab.construct: cannot tell which task construction '{name}' is "
                             "for; give task=NAME or shape=(T, d_in, T_out, d_out)")
    if task is not None and task not in tasks:
        raise ValueError(f"unknown task '{task}'; tasks: {', '.join(tasks)}")
    task_keys = {p["name"] for p in tasks[task]["params"]} if task is not None else set()
    model_params, task_params, train = {"construction": name}, {}, {}
    for k, v in params.items():
        placed = False
        if k in model_keys:
            model_params[k] = v
            placed = True
        if k in task_keys:
            task_params[k] = v
            placed = True
        if not placed and k in train_keys:
            train[k] = v
            placed = True
        if not placed:
            where = f"task {task}" if task is not None else "an explicit shape"
            raise ValueError(f"attnlab.construct: unknown parameter '{k}': neither model.{k} of "
                             f"the construction model nor task.{k} of {where}")
    # local_match3 is built for the task's window: w given for the task sets model.window too.
    if task == "match3_local" and "w" in task_params and "window" not in params:
        model_params["window"] = task_params["w"]
    shape = [integer("construct", f"shape[{k}]", s) for k, s in enumerate(shape)] if shape is not None else []
    m = model("construction", seed=integer("construct", "seed", seed), **model_params)
    m._core.fit_empty(task=task or "", task_params=norm_params("task", task_params),
                      train=norm_params("train", train), shape=shape)
    return m


def _model_doc():
    lines = ["", "    Models and their keys (name = default):"]
    for name, info in _attnlab.list_models().items():
        lines.append(f"      {name}: {info['description']}")
        if info["params"]:
            lines.append(schema_text(info["params"], "model."))
        lines.append(schema_text(info["train_params"], "train."))
    return "\n".join(lines)


model.__doc__ += _model_doc()
