# shellcheck shell=bash
# End to end, the closed-model scenarios of scripts/scenario.sh on the real
# stack: maxconn-sweep --quick (default tier), and in the slow group the full
# maxconn-sweep against the article, fullconn and throughput --quick, tuning
# --quick and its listening sockets. Their summaries are
# judged by tests/e2e/checks/*.test.mjs. Helpers and setup: tests/e2e.sh.

# The closed-model runner through a whole scenario: HAProxy restarted for
# each step's backlog, k6's summaries read, every verdict of the --quick run
# passed (the dashboard tests read this run too).
test_e2e_08_maxconn_sweep_quick_every_verdict_passes() {
  scenario_judged verdicts maxconn-sweep --quick
}

# The article reproduced at its own parameters (30 s steps): every verdict
# of scenarios/maxconn-sweep.json passes (its successful hits against the
# article's, failures where maxconn < the clients and none on the last), and
# the report has its Little's law reading.
test_slow_08_maxconn_sweep_reproduces_the_article() {
  scenario_judged verdicts maxconn-sweep
  grep -q "maxconn needed = clients × service time" "${LAB_ROOT}/$(newest_run maxconn-sweep)/report.md" \
    || fail "no Little's law reading"
}

# fullconn's own steps: the limit acts only on servers with minconn/maxconn.
test_slow_09_quick_fullconn_complete() {
  scenario_judged complete fullconn --quick
}

# throughput's own steps: through HAProxy against direct, the machine's share.
test_slow_09_quick_throughput_complete() {
  scenario_judged complete throughput --quick
}

# tuning --quick: every step ran on the listening socket it asked for (the
# runner restarts HAProxy when a reload cannot change it, and fails the step
# if ss disagrees): fe_main's backlog 128 in every step. The accept queue is
# measured: at maxconn 2000 it fills (backlog + 1), HAProxy's kernel drops
# SYNs and the clients retransmit them; at maxconn 5000 far fewer (the
# tolerances, tuned on a busy 2-core machine, are explained in
# tests/e2e/checks/tuning.test.mjs). After the run the baseline's socket
# (backlog 5000) is back.
test_slow_09e_tuning_quick_sockets_read_back_and_accept_queue_measured() {
  scenario_judged tuning tuning --quick
  assert_eq 5000 "$(fe_main_backlog)" "fe_main backlog after the run (the baseline's)"
}
