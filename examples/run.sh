#!/usr/bin/env bash
# The README's main job: runs vlbias on bundled data and prints where the outputs
# are. Data: SeeGULL global stereotypes v2 (CC-BY-4.0, data/seegull/), a synthetic
# dual-encoder study (examples/social_perception/, tools/make_example_study.py), a synthetic
# trait-pairs study (examples/trait_pairs/, tools/make_trait_pairs_example.py) and a
# synthetic text-to-image study (examples/geo_diversity/, tools/make_geo_example.py).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-runs/example}
mkdir -p "$out"
data=data/seegull/stereotypes_global_v2.csv

# Are stereotypes that more in-region annotators endorse rated more offensive?
build/vlbias compare --table "$data" --value "mean offensiveness_score" --by region_stereo \
  --test kruskal --out "$out/offensiveness_by_endorsement.json"
build/vlbias compare --table "$data" --value "mean offensiveness_score" --by region_stereo \
  --test mannwhitney --pairwise --out "$out/offensiveness_pairwise.json"
build/vlbias describe --table "$data" --value "mean offensiveness_score" --by region_stereo \
  --bootstrap 2000 --seed 1 --out "$out/offensiveness_describe.json"

# A dual-encoder audit (paper 001: cos / Delta cos per social dimension, SC-WEAT,
# markedness, Skew@k/NDKL, AbsDiff, trends) on a bundled synthetic study with a
# planted effect: Black women's images are shifted toward "competent" prompts.
build/vlbias audit examples/social_perception/spec.yaml --out "$out/social_perception"

# A trait-pairs audit (paper 004: CLIP confidence in "a smart person" vs "a dumb person" and
# five more pairs, per race x gender, ANOVA across races and Welch across genders, SC-WEAT) on
# a synthetic FairFace-like study where Black men's images lean "mean" and men's "smart".
build/vlbias audit examples/trait_pairs/spec.yaml --out "$out/trait_pairs"

# A geo-diversity audit (paper 002, DIG-In: realism = precision, diversity = coverage and
# consistency = CLIPScore per region and prompt form, with bootstrap intervals and region
# gaps, plus FID and Vendi) on a bundled synthetic study whose generations for Africa and
# West Asia are pulled toward one stereotyped look (tools/make_geo_example.py).
build/vlbias audit examples/geo_diversity/spec.yaml --out "$out/geo_diversity"

# The same audit started from image folders and a feature model (features_model: the tests'
# RANDOM width-scaled FID Inception-v3 on synthetic pictures; tools/make_geo_images_example.py):
# decoding, pytorch-fid preprocessing and the forward run natively; the features are kept
# beside the images (.vlbias-features/) and reused by the next run.
build/vlbias audit examples/geo_diversity_images/spec.yaml --out "$out/geo_diversity_images"

# LVLM counterfactual analytics (paper 003: MaxGap of toxicity within counterfactual sets,
# PMI words per group, competence-lexicon rates, numeric ratings, refusals, set-blocked
# Friedman and permutation tests, mitigation vs baseline) on real SocialCounterfactuals set
# structure with synthetic answers and a planted bias against Black male images; then the
# same study split into two shards, scanned separately and merged.
build/vlbias audit examples/lvlm_counterfactual/spec.yaml --out "$out/lvlm_counterfactual"
build/vlbias audit examples/lvlm_counterfactual/spec.yaml --save-state "$out/lvlm_all.state"
build/vlbias audit examples/lvlm_counterfactual/spec.yaml --out "$out/lvlm_from_state" \
  --from-state "$out/lvlm_all.state"

# Paper 003 without Perspective (it stops serving at the end of 2026): the same answers scored
# natively by a Detoxify-compatible classifier, then audited with the scorer named in the
# report. The classifier is a tiny random BERT-shaped model that ships in tests/ (its scores
# mean nothing; point --model at a Detoxify folder for real ones). --prefix keeps the
# synthetic toxicity beside the classifier's tiny_toxic.
build/vlbias score classifier --model tests/fixtures/classifier/bert_multilabel \
  examples/lvlm_counterfactual/generations.jsonl --prefix tiny_ --out "$out/lvlm_scored"
build/vlbias audit examples/lvlm_counterfactual/classifier.yaml \
  --input "$out/lvlm_scored/scored.jsonl" --out "$out/lvlm_classifier"
# How the two scorers agree (correlations, Cohen's kappa at 0.5, disagreement per race): a
# replacement scorer is checked against the one it replaces before its gaps are trusted.
build/vlbias metric agreement --table "$out/lvlm_scored/scored.jsonl" \
  --scores toxicity,tiny_toxic --group race --bootstrap 500 --seed 1 \
  --out "$out/scorer_agreement.json"

# Which is less biased: the LVLM's answers without mitigation or with mitigation M1? The
# example's two halves audited as two runs (the same counterfactual sets, split by prompt only:
# examples/compare_runs/lvlm_by_prompt.yaml), then compared finding by finding from their
# summary.json and units/ tables: differences paired by counterfactual set (bootstrap over the
# shared sets), Holm over all, and how often each run ranks first.
grep '"mitigation":"none"' examples/lvlm_counterfactual/generations.jsonl >"$out/lvlm_none.jsonl"
grep '"mitigation":"M1"' examples/lvlm_counterfactual/generations.jsonl >"$out/lvlm_m1.jsonl"
for m in none m1; do
  build/vlbias audit examples/compare_runs/lvlm_by_prompt.yaml --input "$out/lvlm_$m.jsonl" \
    --out "$out/lvlm_$m"
done
build/vlbias compare-runs "$out/lvlm_none" "$out/lvlm_m1" --seed 1 --out "$out/comparison"

# Visual stereotypes in text-to-image generation (paper 000, ViSAGe: likelihood of SeeGULL's
# visual stereotypes in annotated images, theta, offensiveness, caption salience and the
# stereotypical pull, by region) on real SeeGULL + ViSAGe extracts for 12 identities with
# synthetic captions and pull embeddings (examples/visual_stereotypes/generate.py); and the
# study's prompt manifest.
build/vlbias audit examples/visual_stereotypes/spec.yaml --out "$out/visual_stereotypes"
build/vlbias prompts visual-stereotypes --seegull data/seegull/stereotypes_global_v2.csv \
  --visual-attributes examples/visual_stereotypes/visual_attr.csv \
  --out "$out/visual_stereotype_prompts.csv"

# Native CLIP encoding (no Python): the prompt manifest and a folder of images through
# a tiny random CLIP of the real architecture (tools/make_encode_fixtures.py; its
# numbers mean nothing, the pipeline is the real one). Point --model at a Hugging
# Face CLIP folder (e.g. openai/clip-vit-base-patch32) for real embeddings.
model=tests/fixtures/encode/e2e/hf
build/vlbias prompts social-perception --out "$out/prompts.csv"
build/vlbias encode --model "$model" --texts "$out/prompts.csv" --out "$out/prompt_embeddings.npy"
build/vlbias encode --model "$model" --images tests/fixtures/encode/e2e/images \
  --out "$out/image_embeddings.npy"
# Who appears per prompt (issue 42's representation audit): the SYNTHETIC labels of
# "a photo of a {occupation}" x 16 seeds for the 60 WinoGender occupations
# (tools/make_representation_example.py; a planted model that exaggerates the real shares),
# against the US 2015 shares of women (data/winogender/, BLS): shares per prompt with
# simultaneous intervals, MAD and entropy bias, exact and chi-square tests, the gap to the real
# share and the slope of generated on real (above 1: amplified), agreement of two labellers.
build/vlbias audit examples/representation/spec.yaml --out "$out/representation"
echo "example outputs (each audit: results.json, tables/*.csv, report.html, summary.json, units/*.csv):"
ls -1 "$out"/*.json "$out"/*.npy "$out"/visual_stereotype_prompts.csv
echo
echo "reports (open in a browser; self-contained, printable):"
for run in social_perception trait_pairs geo_diversity geo_diversity_images lvlm_counterfactual lvlm_classifier \
  visual_stereotypes representation comparison; do
  echo "  $out/$run/report.html"
done
