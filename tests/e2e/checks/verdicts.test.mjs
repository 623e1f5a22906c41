// Any scenario run (E2E_RUN): it finished, every step has data and every
// verdict passed: the scenario's own expectations (scenarios/*.json "expect"),
// which the e2e checks do not restate.
import { summary, testFinished } from './lib.mjs';

testFinished(summary(), { verdicts: true });
