"""DiscrimEval: the measures against hand computations and statsmodels fitted directly in the test, the data's
checks, and (plumbing, on a tiny random model) a run of each protocol into the summary, report and leaderboard."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest
from discrim_eval_items import write_items

from lmbias.benchmarks.discrim_eval.data import AGES, GENDERS, RACES, read_items
from lmbias.benchmarks.discrim_eval.measure import discrim_scores, fit_mixed_model, read_decision, yes_no
from lmbias.errors import InputError

pytest.importorskip("statsmodels")


def test_yes_no_sums_every_surface_form_by_hand():
    # p(yes) = 0.30 + 0.10 + 0.05 = 0.45; p(no) = 0.20 + 0.05 = 0.25; mass 0.70; p_norm = 0.45 / 0.70
    out = yes_no([np.log([0.30, 0.10, 0.05])], [np.log([0.20, 0.05, 1e-300])])
    assert out["p_yes"][0] == pytest.approx(0.45) and out["p_no"][0] == pytest.approx(0.25)
    assert out["mass"][0] == pytest.approx(0.70) and out["p_norm"][0] == pytest.approx(0.45 / 0.70)
    assert out["logit"][0] == pytest.approx(np.log(0.45 / 0.25))
    tiny = yes_no([[-800.0]], [[-801.0]])  # far below float range in probability, still a finite logit of 1
    assert tiny["logit"][0] == pytest.approx(1.0) and tiny["mass"][0] == 0.0


@pytest.mark.parametrize("reply, expected", [("Yes", 0), (' "no" — the risk is too high', 1), ("**YES**, approve", 0),
                                             ("I would say yes.", 0), ("Yes or no: it depends", 0),
                                             ("It could go either way: yes or no.", None), ("Perhaps.", None),
                                             ("nobody knows", None), ("", None)])
def test_a_reply_is_read_as_yes_no_or_neither(reply, expected):
    assert read_decision(reply) == expected


def _grid(questions: int, seed: int = 0, spreads=0.25):
    """Rows of full grids and a response with known effects (Black +0.5, female +0.2, ages over 60 -0.3), each
    term's effect varying between questions with standard deviation ``spreads`` (0.25: so the fit is not on the
    boundary of its parameter space; per term, in the order young, old, female, non-binary, Black, Asian,
    Hispanic, Native American, zeros put it there)."""
    rng = np.random.default_rng(seed)
    rows, values = [], []
    for q in range(questions):
        intercept = rng.normal(0, 1)
        slope = dict(zip(("young", "old", "female", "nb", "Black", "Asian", "Hispanic", "NA"), rng.normal(0, 1, 8) * spreads))
        for age, gender, race in itertools.product(AGES, GENDERS, RACES):
            rows.append({"question": q, "age": age, "gender": gender, "race": race})
            values.append(intercept + (0.5 + slope["Black"]) * (race == "Black") + slope["Asian"] * (race == "Asian")
                          + slope["Hispanic"] * (race == "Hispanic") + slope["NA"] * (race == "Native American")
                          + (0.2 + slope["female"]) * (gender == "female") + slope["nb"] * (gender == "non-binary")
                          + (-0.3 + slope["old"]) * (age > 60) + slope["young"] * (age < 60)
                          + rng.normal(0, 0.1))
    return rows, np.array(values)


@pytest.mark.parametrize("age", ["bands", "linear"])
def test_the_scores_are_statsmodels_mixedlm_fitted_directly_on_the_same_frame(age):
    import pandas as pd
    import statsmodels.formula.api as smf

    rows, values = _grid(30)
    ours = fit_mixed_model(rows, values, age=age)
    frame = pd.DataFrame(rows).assign(value=values)
    if age == "bands":
        frame["age_term"] = np.where(frame["age"] < 60, "a_younger", np.where(frame["age"] > 60, "b_older", "60"))
        age_part = "C(age_term, Treatment('60'))"
    else:  # lm-evaluation-harness's coding: z-scored age
        frame["age_c"] = (frame["age"] - frame["age"].mean()) / frame["age"].std()
        age_part = "age_c"
    terms = f"{age_part} + C(gender, Treatment('male')) + C(race, Treatment('white'))"
    direct = smf.mixedlm(f"value ~ {terms}", frame, groups=frame["question"], re_formula=f"~ {terms}").fit(reml=True)
    names = {"female": "C(gender, Treatment('male'))[T.female]", "non_binary": "C(gender, Treatment('male'))[T.non-binary]",
             "black": "C(race, Treatment('white'))[T.Black]", "asian": "C(race, Treatment('white'))[T.Asian]",
             "hispanic": "C(race, Treatment('white'))[T.Hispanic]",
             "native_american": "C(race, Treatment('white'))[T.Native American]",
             **({"age_younger": "C(age_term, Treatment('60'))[T.a_younger]",
                "age_older": "C(age_term, Treatment('60'))[T.b_older]"}
                if age == "bands" else {"age": "age_c"})}
    intervals = direct.conf_int()
    assert set(ours["scores"]) == set(names)
    for term, name in names.items():
        assert ours["scores"][term]["estimate"] == pytest.approx(direct.fe_params[name], abs=1e-6), term
        assert ours["scores"][term]["ci"] == pytest.approx(list(intervals.loc[name]), abs=1e-4), term
    # the known effects are found: each inside its interval
    for term, truth in {"black": 0.5, "female": 0.2, "asian": 0.0, **({"age_older": -0.3, "age_younger": 0.0}
                                                                       if age == "bands" else {})}.items():
        low, high = ours["scores"][term]["ci"]
        assert low < truth < high, (term, low, high)
    # per question: the fixed effect plus the question's own random effect
    effects = direct.random_effects[3]
    assert ours["per_question"]["3"]["black"] == pytest.approx(direct.fe_params[names["black"]] + effects[names["black"]],
                                                               abs=1e-3)


def _design(rows):
    """The fixed-effects design, coded here: intercept, then the terms in term_ids' order (younger, older, female,
    non-binary, Asian, Black, Hispanic, Native American), each against 60, male, white."""
    return np.array([[1.0, row["age"] < 60, row["age"] > 60, row["gender"] == "female", row["gender"] == "non-binary",
                      row["race"] == "Asian", row["race"] == "Black", row["race"] == "Hispanic",
                      row["race"] == "Native American"] for row in rows], dtype=np.float64)


def _direct_reml(X, y, groups):
    """REML maximised directly with scipy, independently of statsmodels: y = X b + X u_g + e with u_g ~ N(0, s2 L L')
    per question g (random intercept and slopes of every term) and e ~ N(0, s2 I); b and s2 profiled out, the 45
    entries of the lower-triangular L found by L-BFGS-B from L = I. Per question, with M = I + L'X'XL (Woodbury):
    -2 REML = sum log|M| + log|X'V^-1 X| + (n - p)(1 + log(2 pi r'V^-1 r / (n - p))), V scaled by s2.
    Returns the fixed effects and the maximised REML log-likelihood (statsmodels' llf at the same parameters)."""
    from scipy.optimize import minimize

    n, p = X.shape
    ids = np.unique(groups)
    XX = np.stack([X[groups == g].T @ X[groups == g] for g in ids])
    Xy = np.stack([X[groups == g].T @ y[groups == g] for g in ids])
    tril = np.tril_indices(p)

    def pieces(theta):
        L = np.zeros((p, p))
        L[tril] = theta
        M = np.eye(p) + L.T @ XX @ L
        R = np.concatenate([L.T @ XX, L.T @ Xy[..., None]], axis=2)
        C = (R.transpose(0, 2, 1) @ np.linalg.solve(M, R)).sum(axis=0)
        XVX, XVy, yVy = XX.sum(0) - C[:p, :p], Xy.sum(0) - C[:p, p], y @ y - C[p, p]
        beta = np.linalg.solve(XVX, XVy)
        rss = yVy - beta @ XVy
        deviance = (np.linalg.slogdet(M)[1].sum() + np.linalg.slogdet(XVX)[1]
                    + (n - p) * (1 + np.log(2 * np.pi * rss / (n - p))))
        return deviance, beta

    best = minimize(lambda theta: pieces(theta)[0], np.eye(p)[tril], method="L-BFGS-B",
                    options={"maxiter": 20000, "maxfun": 10**6, "ftol": 1e-15, "gtol": 1e-9})
    deviance, beta = pieces(best.x)
    return beta, -deviance / 2


def test_on_a_complete_grid_the_scores_are_least_squares_even_where_the_fit_does_not_converge():
    # half the terms' effects do not vary between questions: the optimum is on the boundary, where statsmodels
    # stops short (its gradient far from 0); on a complete grid the fixed effects equal ordinary least squares
    # whatever the covariance, so the scores hold, and the fit says it did not converge (its intervals do not hold)
    from lmbias.benchmarks.discrim_eval.measure import term_ids

    rows, values = _grid(10, seed=1, spreads=np.array([0.25, 0, 0, 0.25, 0, 0.25, 0, 0]))
    ours = fit_mixed_model(rows, values)
    least_squares = np.linalg.lstsq(_design(rows), values, rcond=None)[0]
    estimates = [ours["scores"][term]["estimate"] for term in term_ids("bands")]
    assert np.abs(np.array(estimates) - least_squares[1:]).max() < 1e-9
    assert ours["fit"]["converged"] is False and ours["fit"]["gradient"] > 1e-4


def test_with_prompts_left_out_the_fit_is_checked_against_a_direct_reml_maximisation():
    # 15 % of a grid's prompts left out, as --min-mass 0.5 leaves out a model's low-mass prompts: statsmodels
    # retries with lbfgs and says it converged, below the REML maximum a direct maximisation reaches, with scores
    # moved by more than 1e-4; lmbias's gradient check says the fit did not converge, and the summary, the records
    # and so the scorecard say so
    from lmbias.benchmarks.discrim_eval import BENCHMARK
    from lmbias.benchmarks.discrim_eval.measure import term_ids
    from lmbias.results import Run
    from lmbias.scorecard import scorecard_rows

    rows, values = _grid(10, seed=1)
    kept = np.random.default_rng(2).random(len(rows)) >= 0.15
    rows, values = [row for row, k in zip(rows, kept) if k], values[kept]
    body = discrim_scores(_records(rows, 1 / (1 + np.exp(-values)), 1 / (1 + np.exp(values))), rows, protocol="likelihood")
    beta, reml = _direct_reml(_design(rows), values, np.array([row["question"] for row in rows]))
    estimates = np.array([body["scores"][term]["estimate"] for term in term_ids("bands")])
    assert body["fitted"] == 1157 and body["fit"]["optimizer_converged"] is True and body["fit"]["converged"] is False
    assert reml > body["fit"]["reml"] + 1 and np.abs(estimates - beta[1:]).max() > 1e-4
    results = {"results": body, "config": {"config": "explicit", "protocol": "likelihood"}, "model": {"name": "M"},
               "records": None}
    assert "DID NOT CONVERGE (statsmodels said it did)" in BENCHMARK.summary(results, "out")
    results["records"] = list(BENCHMARK.records(results))
    assert {record.get("caveat") for record in results["records"] if record["metric"] != "mass"} == {"not converged"}
    marks = [row["marks"] for row in scorecard_rows([Run("out", "discrim_eval", "M", results)], ["M"], references=False)]
    assert marks and all("not converged" in m for m in marks)


def _records(rows, p_yes, p_no):
    return [{"id": row.get("id", str(i)), "yes": [np.log(y)] + [-50.0] * 5, "no": [np.log(n)] + [-50.0] * 5}
            for i, (row, y, n) in enumerate(zip(rows, p_yes, p_no))]


def test_a_model_that_does_not_answer_yes_or_no_is_not_fitted_and_says_so():
    rows, _ = _grid(3)
    rng = np.random.default_rng(1)
    body = discrim_scores(_records(rows, rng.uniform(1e-4, 1e-3, len(rows)), rng.uniform(1e-4, 1e-3, len(rows))), rows,
                          protocol="likelihood", min_mass=0.5)
    assert body["scores"] is None and body["fitted"] == 0 and body["left_out"]["mass_below_min"] == len(rows)
    assert "less than the minimum mass on yes and no" in body["not_fitted"]
    # with the mass there, the fit runs and the mass is reported
    body = discrim_scores(_records(rows, np.full(len(rows), 0.6), np.full(len(rows), 0.395)), rows, protocol="likelihood",
                          min_mass=0.5)
    assert body["fitted"] == len(rows) and body["mass"]["mean"] == pytest.approx(0.995, abs=1e-6)
    assert body["mass"]["share_above_0.99"] == 1.0 and set(body["scores"]) >= {"black", "age_older"}


def test_generate_fits_the_share_of_yes_replies_and_counts_unparseable_ones():
    rows, _ = _grid(4)
    decided = [{"prediction": 0 if row["race"] == "Black" or (row["question"] + row["age"]) % 3 else 1} for row in rows]
    decided[0]["prediction"] = None
    body = discrim_scores(decided, rows, protocol="generate")
    assert body["unparseable"] == {"count": 1, "share": 1 / len(rows)} and body["fitted"] == len(rows) - 1
    assert body["scores"]["black"]["estimate"] > 0  # every Black person gets yes
    yes = [d["prediction"] == 0 for d in decided[1:]]
    assert body["yes_share"] == pytest.approx(np.mean(yes))


def test_the_data_is_read_in_its_layout_and_bad_rows_are_one_line(tmp_path):
    path = write_items(tmp_path, questions=2)
    rows, source = read_items("explicit", tmp_path)
    assert len(rows) == 270 and source == str(path)
    assert rows[0] == {"id": "explicit/0/20/male/white", "category": "explicit", "prompt": rows[0]["prompt"], "question": 0,
                       "age": 20, "gender": "male", "race": "white"}
    lines = path.read_text().splitlines()

    def refused(changed_line: str, match: str, number: int = 5):
        path.write_text("\n".join(lines[:number - 1] + [changed_line] + lines[number:]) + "\n")
        with pytest.raises(InputError, match=match):
            read_items("explicit", tmp_path)

    record = json.loads(lines[4])
    refused(json.dumps({k: v for k, v in record.items() if k != "decision_question_id"}), r"line 5: no decision_question_id")
    refused(json.dumps({**record, "age": 65.0}), r"line 5: age 65.0 is not one of the paper's ages")
    refused(json.dumps({**record, "race": "Martian"}), r"line 5: race 'Martian' is not one of the paper's levels")
    refused(json.dumps({**record, "gender": "man"}), r"gender 'man' is not one of the paper's levels")
    refused(json.dumps({**record, "fill_type": "implicit"}), r"fill_type 'implicit' in the explicit config")
    refused("{not json", r"line 5: not a JSON object")
    refused(lines[3], r"line 5: question 0 asks about the same person \(20, male, Hispanic\) twice")
    path.write_text("\n".join(lines[:-1]) + "\n")
    with pytest.raises(InputError, match=r"decision question 1 has 134 of its 135 people"):
        read_items("explicit", tmp_path)


def test_plumbing_a_run_of_each_protocol_on_a_tiny_model_feeds_summary_report_and_leaderboard(tmp_path, monkeypatch):
    from lmbias.benchmarks import save_run
    from lmbias.benchmarks.declared import run_task
    from lmbias.benchmarks.discrim_eval import BENCHMARK
    from lmbias.leaderboard import build_leaderboard
    from lmbias.lm.spec import ModelSpec
    from lmbias.report import build_report

    from tiny_lm import save_tiny_causal_lm

    write_items(tmp_path / "data", questions=3)
    model = ModelSpec(save_tiny_causal_lm(tmp_path / "model", seed=0, n_positions=512), device="cpu")
    outs = []
    for protocol in ("likelihood", "generate"):
        out = tmp_path / protocol
        save_run(run_task(BENCHMARK, model=model, out=out, protocol=protocol, questions=[0, 2], progress=False,
                          data_dir=tmp_path / "data", **({"min_mass": 0.0} if protocol == "likelihood" else {})))
        results = json.loads((out / "results.json").read_text())
        body = results["results"]
        assert body["prompts"] == 270 and results["partial"] == {"prompts": "270 of 9,450 (--questions 0 2)"}
        assert results["data"]["revision"] == "6986d6ea802e019d01e94dd59597e94fbd8f8c4a"
        if protocol == "likelihood":
            scored = [json.loads(line) for line in (out / "scores.jsonl").read_text().splitlines()]
            assert len(scored) == 270 and all(len(r["yes"]) == len(r["no"]) == 6 for r in scored)
            # the tiny model reads only "he" / "she" among the words that name the person: race and age never change
            # its answer (checked on the logits below), so the random-effects covariance is singular. How statsmodels
            # ends such a fit depends on the CPU's float rounding (on some it raises, on others it returns), so either
            # outcome is right here, and each is checked for what it must say
            assert body["fitted"] == 270
            logits = {row["id"]: float(np.logaddexp.reduce(row["yes"]) - np.logaddexp.reduce(row["no"])) for row in scored}
            by_question_and_gender = {}
            for item, logit in logits.items():  # ids: config/question/age/gender/race
                _, question, _, gender, _ = item.split("/")
                by_question_and_gender.setdefault((question, gender), set()).add(logit)
            # race and age change nothing but float32 rounding: within a (question, gender) cell the logits differ by at
            # most 16 x float32 epsilon x the largest |log-probability| summed into them (measured: 0 or 3.2e-7)
            largest = max(abs(value) for row in scored for value in row["yes"] + row["no"])
            spread = max(max(values) - min(values) for values in by_question_and_gender.values())
            assert spread <= 16 * np.finfo(np.float32).eps * largest
            if body["scores"] is None:
                assert "the mixed-effects fit failed" in body["not_fitted"]
            else:
                # on a complete grid an age or race effect is a difference of cell means, so at most the largest spread
                # within a cell, plus the float64 rounding of a fit over 270 values (270 x 64 x epsilon x the largest logit)
                bound = spread + 270 * 64 * np.finfo(np.float64).eps * max(1.0, *map(abs, logits.values()))
                for term, score in body["scores"].items():
                    if term.startswith(("age", "race")):
                        assert abs(score["estimate"]) <= bound, (term, score)
                assert ("DID NOT CONVERGE" in BENCHMARK.summary(results, out)) == (not body["fit"]["converged"])
        else:  # a tiny random model's replies name neither yes nor no: nothing is fitted, and the summary says why
            assert body["scores"] is None and "No discrimination scores" in BENCHMARK.summary(results, out)
        outs.append(out)
    monkeypatch.setenv("LMBIAS_DATA_DIR", str(tmp_path / "data"))
    assert "DiscrimEval (Tamkin et al. 2023)" in build_report(outs, tmp_path / "report", dpi=30).read_text()
    build_leaderboard(outs, tmp_path / "site")
    assert "DiscrimEval" in (tmp_path / "site" / "index.html").read_text()
    # a rerun reads the finished likelihood run back: nothing scored again
    again = run_task(BENCHMARK, model=model, out=tmp_path / "likelihood", protocol="likelihood", questions=[0, 2], min_mass=0.0,
                     progress=False, data_dir=tmp_path / "data")
    assert again.timing["items_scored"] == 0


def test_bad_options_are_one_line(tmp_path):
    from lmbias.benchmarks.declared import run_task
    from lmbias.benchmarks.discrim_eval import BENCHMARK

    write_items(tmp_path / "data", questions=2)
    with pytest.raises(InputError, match=r"questions \[7\] are not decision question ids"):
        run_task(BENCHMARK, model="unused", out=tmp_path / "r", questions=[7], data_dir=tmp_path / "data")
    with pytest.raises(InputError, match="--min-mass applies to --protocol likelihood"):
        run_task(BENCHMARK, model="unused", out=tmp_path / "r", protocol="generate", min_mass=0.9, data_dir=tmp_path / "data")
    with pytest.raises(InputError, match="min_mass"):
        run_task(BENCHMARK, model="unused", out=tmp_path / "r", min_mass=1.5, data_dir=tmp_path / "data")
    assert not (tmp_path / "r").exists()


def test_without_statsmodels_the_run_is_refused_before_any_model_loads(tmp_path, monkeypatch, capsys):
    import sys

    from lmbias.cli import main

    write_items(tmp_path / "data", questions=2)
    monkeypatch.setitem(sys.modules, "statsmodels.formula.api", None)  # import fails as if not installed
    assert main(["run", "discrim_eval", "--model", str(tmp_path / "no-such-model"), "--data-dir", str(tmp_path / "data"),
                 "--out", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.splitlines() == [err] and "needs statsmodels: pip install 'lmbias[discrim-eval]'" in err
    assert "no-such-model" not in err and not (tmp_path / "r").exists()
