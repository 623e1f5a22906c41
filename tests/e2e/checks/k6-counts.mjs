// The requests k6 sent and those that failed, summed over its summaries (one
// per load-generator replica), as "REQUESTS FAILED":
//   node tests/e2e/checks/k6-counts.mjs SUMMARY.json...
// The e2e tests' reader; tests/e2e/checks/load.test.mjs judges the counts.
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

export function k6Counts(files) {
  let requests = 0;
  let failed = 0;
  for (const file of files) {
    const { metrics } = JSON.parse(readFileSync(file, 'utf8'));
    requests += metrics.http_reqs.values.count;
    failed += metrics.http_req_failed.values.passes;
  }
  return { requests, failed };
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { requests, failed } = k6Counts(process.argv.slice(2));
  console.log(requests, failed);
}
