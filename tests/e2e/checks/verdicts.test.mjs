// Any scenario run (E2E_RUN): it finished, every step has data and every
// verdict passed (the scenario's own checks, e.g. long-lived's mean − floor
// = sleep/2 ±10%).
import { summary, testFinished } from './lib.mjs';

testFinished(summary(), { verdicts: true });
