# Type stubs of the compiled module (python/module.cpp): what editors complete and check.
import os
from typing import Any, Sequence, Union

import numpy as np
import numpy.typing as npt

__version__: str

ArrayLike2D = npt.ArrayLike  # a 2-D array (rows = items); converted to float32
ArrayLike1D = npt.ArrayLike

class Error(Exception): ...
class InputError(Error, ValueError): ...
class UsageError(Error, ValueError): ...
class InternalError(Error, RuntimeError): ...

def set_threads(n: int) -> None:
    """Worker threads for every later call (0 = all cores, at most 256), as the CLI's --threads; vlbias.UsageError (a ValueError) outside 0..256."""

def threads() -> int:
    """Worker threads in use."""

Labels = Union[Sequence[Any], dict[str, Sequence[Any]]]

def maxgap(
    scores: Union[ArrayLike1D, dict[str, ArrayLike1D]],
    set_ids: Labels,
    groups: Labels,
    by: Union[Labels, None] = None,
    bootstrap: int = 1000,
    ci: float = 0.95,
    seed: int = 0,
) -> dict[str, Any]:
    """MaxGap over counterfactual sets (paper 003), as `vlbias metric maxgap`: sets, maxgap
    and max summaries with CIs, histogram, max_group_share (per score and by-level)."""

def pmi(
    texts: Sequence[str],
    groups: Labels,
    by: Union[Labels, None] = None,
    min_freq: int = 10,
    threshold: float = 1.0,
    top: int = 0,
    log_base: float = 0.0,
) -> dict[str, Any]:
    """Over-represented words per group (paper 003's PMI), as `vlbias metric pmi`."""

def clipscore(
    images: ArrayLike2D,
    texts: ArrayLike2D,
    variant: str = "raw",
    text_row: Union[Sequence[int], None] = None,
    percentiles: Sequence[float] = (10, 50, 90),
) -> dict[str, Any]:
    """CLIPScore (raw | hessel | torchmetrics). Keys: variant, pairing, overall {n, mean, sd,
    min, max, percentiles}, and per-image arrays cosine and score."""

def compare(
    values: ArrayLike1D,
    groups: Union[Sequence[Any], dict[str, Sequence[Any]]],
    test: str = "anova",
    pairwise: bool = False,
    within: Union[None, Sequence[Any], dict[str, Sequence[Any]]] = None,
    min_group_size: int = 2,
) -> dict[str, Any]:
    """Compare values across groups (anova | welch | student | mannwhitney | kruskal), as
    `vlbias compare`; Holm and BH over all comparisons."""

class Clip:
    """A CLIP model directory (Hugging Face or open_clip layout)."""

    def __init__(self, path: Union[str, os.PathLike[str]], crop_rounding: Union[str, None] = None, text_cleaning: Union[str, None] = None) -> None: ...
    def encode_texts(self, texts: Sequence[str], normalize: bool = True) -> npt.NDArray[np.float32]:
        """n texts -> (n, embed_dim) float32, L2-normalised unless normalize=False."""
    def encode_images(
        self, images: Sequence[Any], normalize: bool = True, batch_size: int = 32
    ) -> npt.NDArray[np.float32]:
        """n image paths (or H x W x 3 uint8 RGB arrays) -> (n, embed_dim) float32."""
    def tokenize(self, text: str) -> list[int]:
        """Token ids [SOT ... EOT]."""
    @property
    def embed_dim(self) -> int: ...
    def describe(self) -> dict[str, Any]:
        """The model config, preprocessing and tokenizer."""

class FeatureModel:
    """An image feature model as `vlbias features --model` opens it: the FID Inception-v3's
    weights, a Hugging Face DINOv2 folder or a CLIP folder."""

    def __init__(
        self,
        path: Union[str, os.PathLike[str]],
        preprocess: str = "",
        output: str = "pool3",
        image_size: int = 0,
        positions: str = "scale-factor",
    ) -> None: ...
    def features(self, images: Sequence[Any], batch_size: int = 0) -> npt.NDArray[np.float32]:
        """n image paths (or H x W x 3 uint8 RGB arrays) -> (n, dim) raw float32 features."""
    @property
    def dim(self) -> int: ...
    @property
    def kind(self) -> str:
        """clip, inception-v3-fid or dinov2"""
    def describe(self) -> dict[str, Any]:
        """The model and its preprocessing."""

def inception_score(logits: ArrayLike2D, splits: int = 10) -> dict[str, Any]:
    """Inception Score of n x classes logits: inception_score, sd, splits, n, classes."""

def audit(spec: Union[str, os.PathLike[str]], out: Union[str, os.PathLike[str]]) -> dict[str, Any]:
    """Run an audit spec into the folder `out`; returns results.json as a dict."""

def prdc(real: ArrayLike2D, fake: ArrayLike2D, k: int = 5, inclusive: bool = False) -> dict[str, Any]:
    """Precision, recall, density and coverage of generated features against real ones.

    Keys: precision, recall, density, coverage, k, ball, n_real, n_fake, dim, neighbours
    (and note when a value is undefined)."""

def fid(real: ArrayLike2D, fake: ArrayLike2D) -> dict[str, Any]:
    """Frechet distance. Keys: fid, mean_term, trace_real, trace_fake, trace_sqrt, n_real,
    n_fake, dim, covariance."""

def kid(
    real: ArrayLike2D,
    fake: ArrayLike2D,
    subsets: int = 100,
    subset_size: int = 1000,
    seed: int = 0,
    degree: int = 3,
    gamma: float = 0.0,
    coef0: float = 1.0,
) -> dict[str, Any]:
    """Kernel Inception Distance. Keys: kid, sd, subsets, subset_size, kernel, estimator,
    n_real, n_fake, dim, per_subset (and note)."""

def vendi(features: ArrayLike2D, q: float = 1.0) -> dict[str, Any]:
    """Vendi score with the cosine kernel. Keys: vendi, q, kernel, n, dim, rank,
    eigenvalues_of."""

def scweat(
    targets: ArrayLike2D,
    a: ArrayLike2D,
    b: ArrayLike2D,
    p_test: str = "permutation",
    permutations: int = 10000,
    seed: int = 0,
) -> dict[str, Any]:
    """SC-WEAT. Keys: effect_size, mean_difference, per_target, n_a, n_b, p_value, p_test,
    permutations, method, seed (and note)."""

def skew(
    scores: ArrayLike1D,
    labels: Sequence[Union[str, int]],
    k: int,
    desired: str = "uniform",
    absent: str = "-inf",
) -> dict[str, Any]:
    """Skew@k per class and MaxSkew@k. Keys: skew, max_skew, k, n, counts, desired, class_n,
    tie_rule."""

def ndkl(scores: ArrayLike1D, labels: Sequence[Union[str, int]], desired: str = "uniform") -> dict[str, Any]:
    """NDKL of a ranking. Keys: ndkl, n, desired, class_n, tie_rule."""
