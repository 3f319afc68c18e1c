// A node:test reporter that writes one line for each test that skipped or is marked todo
// (file, name, reason): scripts/run-tests.mjs reads it in CI, where nothing may skip
// (src/test-support/ci.ts says why).
export default async function* skipsReporter(source) {
  for await (const event of source) {
    if (event.type !== 'test:pass' && event.type !== 'test:fail') continue;
    const { skip, todo, name, file } = event.data;
    if (skip === undefined && todo === undefined) continue;
    const reason = typeof skip === 'string' ? skip : typeof todo === 'string' ? todo : skip !== undefined ? 'skipped' : 'todo';
    yield `${file ?? '?'}\t${name}\t${reason}\n`;
  }
}
