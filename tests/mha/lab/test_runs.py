"""The lab: section of params.yaml: each run is the main run with the lab's schedule and its own model options."""

import copy
from dataclasses import asdict
from pathlib import Path

import pytest
import yaml

from mha import schema
from mha.lab.runs import lab_run_config
from mha.lab.settled import SETTLED_FROM
from mha.schema import LAB_TRAIN_KEYS, MIN_SEEDS, SCHEDULE_KEYS, LabConfig

REPO = Path(__file__).resolve().parents[3]
PARAMS = yaml.safe_load((REPO / "params.yaml").read_text())
RUNS = {  # the lab's runs, each the model options that differ from model:
    "reference": {},
    "heads_1": {"n_head": 1},
    "heads_4": {"n_head": 4},
    "heads_8": {"n_head": 8},
    "no_scale": {"n_head": 1, "scale_scores": False},
    "no_positions": {"positions": "none"},
    "sinusoidal": {"positions": "sinusoidal"},
}


def test_params_yaml_holds_exactly_the_issues_runs_and_powers_of_two_up_to_512():
    lab = LabConfig.from_params(PARAMS)
    assert lab.runs == RUNS
    assert lab.scale["d_ks"] == [2**i for i in range(10)]
    assert lab.schedule["max_iters"] < PARAMS["train"]["max_iters"]  # shorter than the main run


@pytest.mark.parametrize("name", sorted(RUNS))
def test_a_run_is_the_main_run_with_the_schedule_its_seed_and_only_its_own_model_options(name):
    main = schema.resolve(PARAMS)
    for seed in PARAMS["lab"]["seeds"]:
        run = lab_run_config(PARAMS, name, seed)
        model, lab_model = asdict(main.model), asdict(run.model)
        assert {k: v for k, v in lab_model.items() if model[k] != v} == RUNS[name]
        train, lab_train = asdict(main.train), asdict(run.train)
        assert {k for k in train if train[k] != lab_train[k]} <= set(LAB_TRAIN_KEYS)
        assert {k: lab_train[k] for k in SCHEDULE_KEYS} == PARAMS["lab"]["schedule"]
        assert lab_train["seed"] == seed and lab_train["optimizer"] == main.train.optimizer  # the same recipe
        assert run.data == main.data


def test_the_lab_trains_every_run_from_at_least_two_seeds_for_1000_steps():
    """Two seeds give a spread (benchmarks/README.md: How long the lab trains); 1,000 steps settle every finding."""
    lab = LabConfig.from_params(PARAMS)
    assert len(lab.seeds) >= MIN_SEEDS == 2 and len(set(lab.seeds)) == len(lab.seeds)
    assert lab.schedule["max_iters"] >= max(SETTLED_FROM.values()) == 1000


def test_the_no_scale_run_has_one_head_of_d_k_128():
    run = lab_run_config(PARAMS, "no_scale", PARAMS["lab"]["seeds"][0])
    assert run.model.n_embd // run.model.n_head == 128 and run.model.scale_scores is False


def test_resolving_a_run_leaves_the_params_as_they_were():
    params = copy.deepcopy(PARAMS)
    lab_run_config(params, "heads_8", PARAMS["lab"]["seeds"][-1])
    assert params == PARAMS


def with_lab(path: str, value) -> dict:
    """PARAMS with lab.<path> set to value (None: the key removed)."""
    params = copy.deepcopy(PARAMS)
    *parents, last = path.split(".")
    section = params["lab"]
    for key in parents:
        section = section[key]
    if value is None:
        del section[last]
    else:
        section[last] = value
    return params


@pytest.mark.parametrize(("params", "name", "expected"), [
    (PARAMS, "heads_3", "lab.runs has no run 'heads_3'; the runs are: reference, heads_1, heads_4"),
    (with_lab("colour", 1), "reference",
     "lab.colour is not a known setting; lab has: seeds, schedule, runs, scale"),
    (with_lab("seeds", [1337]), "reference", "lab.seeds must be a list of at least 2 different integers"),
    (with_lab("seeds", [1, 1, 2]), "reference", "lab.seeds must be a list of at least 2 different integers"),
    (with_lab("seeds", None), "reference", "lab.seeds is missing"),
    (with_lab("schedule.batch_size", 8), "reference",
     "lab.schedule.batch_size is not a known setting; lab.schedule has: max_iters"),
    (with_lab("schedule.warmup_iters", None), "reference", "lab.schedule.warmup_iters is missing"),
    (with_lab("runs.heads_1", {"heads": 1}), "heads_1",
     "lab.runs.heads_1.heads is not a known setting (did you mean lab.runs.heads_1.n_head?)"),
    (with_lab("runs.heads_1", {"heads": 1}), "reference", "lab.runs.heads_1.heads is not a known setting"),
    (with_lab("runs.heads_1", {"attention": False}), "heads_1",
     "lab.runs.heads_1.attention is not a known setting"),
    (with_lab("runs", {}), "reference", "lab.runs is empty"),
    (with_lab("order.windows", 0), "reference", "lab.order.windows must be a positive integer, got 0"),
    (with_lab("scale.d_ks", None), "reference",
     "lab.scale.d_ks is missing; lab.scale needs: d_ks, samples"),
    (with_lab("runs.heads_3", {"n_head": 3}), "heads_3",
     "lab run heads_3 (model: with lab.runs.heads_3, train: with lab.schedule): model.n_embd must be divisible"),
    (with_lab("schedule.max_iters", 0), "reference", "train: with lab.schedule): train.max_iters must be positive"),
    ({"model": PARAMS["model"], "train": PARAMS["train"]}, "reference", "lab: must be a mapping of settings, got None"),
])
def test_a_bad_lab_section_is_refused_naming_the_key_and_what_is_allowed(params, name, expected):
    with pytest.raises(ValueError) as caught:
        lab_run_config(params, name, 1337)
    assert expected in str(caught.value)


def test_a_seed_the_lab_does_not_list_is_refused():
    seeds = ", ".join(str(seed) for seed in PARAMS["lab"]["seeds"])
    with pytest.raises(ValueError, match=f"lab.seeds has no seed 7; the seeds are: {seeds}$"):
        lab_run_config(PARAMS, "reference", 7)
