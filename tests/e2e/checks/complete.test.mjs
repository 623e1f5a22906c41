// Any scenario run (E2E_RUN): it finished and every step has data.
import { summary, testFinished } from './lib.mjs';

testFinished(summary());
