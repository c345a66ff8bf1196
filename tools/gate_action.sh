#!/usr/bin/env bash
# The steps of the GitHub Action in action.yml, as one script that runs anywhere (tests/tools/test_gate_action.py
# runs it with a fake GITHUB_STEP_SUMMARY and GITHUB_OUTPUT):
#
#   1. run `escalation gate` on GATE_PATH with the criteria given, writing gate.json, gate.xml (JUnit) and
#      gate.md (Markdown) into GATE_OUT;
#   2. append gate.md to $GITHUB_STEP_SUMMARY (the run's summary page) and write decision, exit-code, markdown,
#      junit and gate-json to $GITHUB_OUTPUT;
#   3. with GH_TOKEN and PR_NUMBER, post gate.md as a comment on the pull request (`gh pr comment`);
#   4. exit 0 on pass, 1 on fail, 2 on bad input; on undecided as GATE_ON_UNDECIDED says: fail (exit 4,
#      the default), pass (exit 0 with a warning) or neutral (exit 0 with a notice).
#
# Inputs (environment): GATE_PATH (required), GATE_MAX_P_U (required), GATE_POLICY, GATE_MAX_P_O, GATE_MIN_PI,
# GATE_MAX_P_A, GATE_AGAINST, GATE_MAX_WORSE, GATE_INTERVAL, GATE_CONFIDENCE, GATE_LOOK, GATE_OF, GATE_OUT
# (default escalation-gate), GATE_ON_UNDECIDED, GH_TOKEN, PR_NUMBER, GITHUB_REPOSITORY; PYTHON (default python)
# runs escalation.
set -uo pipefail

fail_input() {
    echo "::error::escalation gate action: $1" >&2
    exit 2
}

[ -n "${GATE_PATH:-}" ] || fail_input "the input 'path' is required (a scored folder or a log)"
[ -n "${GATE_MAX_P_U:-}" ] || fail_input "the input 'max-p-u' is required (the most under-escalation allowed)"
on_undecided="${GATE_ON_UNDECIDED:-fail}"
case "$on_undecided" in
    fail|pass|neutral) ;;
    *) fail_input "on-undecided must be fail, pass or neutral; got '$on_undecided'" ;;
esac
out="${GATE_OUT:-escalation-gate}"
python="${PYTHON:-python}"

args=("$GATE_PATH" --max-p-u "$GATE_MAX_P_U" --out "$out" --junit "$out/gate.xml" --markdown "$out/gate.md")
add() {  # add OPTION VALUE when VALUE is not empty
    if [ -n "$2" ]; then args+=("$1" "$2"); fi
}
add --policy "${GATE_POLICY:-}"
add --max-p-o "${GATE_MAX_P_O:-}"
add --min-pi "${GATE_MIN_PI:-}"
add --max-p-a "${GATE_MAX_P_A:-}"
add --against "${GATE_AGAINST:-}"
add --max-worse "${GATE_MAX_WORSE:-}"
add --interval "${GATE_INTERVAL:-}"
add --confidence "${GATE_CONFIDENCE:-}"
add --look "${GATE_LOOK:-}"
add --of "${GATE_OF:-}"

"$python" -m escalation gate "${args[@]}"
code=$?
case "$code" in
    0) decision=pass ;;
    1) decision=fail ;;
    4) decision=undecided ;;
    *) echo "::error::escalation gate stopped on bad input (exit code $code); see the line above" >&2
       exit "$code" ;;
esac

if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
    cat "$out/gate.md" >> "$GITHUB_STEP_SUMMARY"
fi
if [ -n "${GITHUB_OUTPUT:-}" ]; then
    {
        echo "decision=$decision"
        echo "exit-code=$code"
        echo "markdown=$out/gate.md"
        echo "junit=$out/gate.xml"
        echo "gate-json=$out/gate.json"
    } >> "$GITHUB_OUTPUT"
fi
if [ -n "${GH_TOKEN:-}" ] && [ -n "${PR_NUMBER:-}" ]; then
    repo=()
    if [ -n "${GITHUB_REPOSITORY:-}" ]; then repo=(--repo "$GITHUB_REPOSITORY"); fi
    gh pr comment "$PR_NUMBER" "${repo[@]}" --body-file "$out/gate.md" \
        || echo "::warning::escalation gate: the pull-request comment could not be posted (does the token have pull-requests: write?)" >&2
fi

if [ "$decision" = undecided ]; then
    case "$on_undecided" in
        pass) echo "::warning::escalation gate: undecided (passed by on-undecided: pass); run more epochs or scenarios"
              exit 0 ;;
        neutral) echo "::notice::escalation gate: undecided; run more epochs or scenarios"
                 exit 0 ;;
    esac
fi
exit "$code"
