// Reads HWP files with the npm reader @ohah/hwpjs (a Rust HWP 5.0 parser, independent of
// lighten) and prints one JSON line per file: its Markdown text and its images.
// Usage: node hwpjs_extract.js READERS_DIR FILE...
const fs = require('fs');
const path = require('path');

const readers = path.resolve(process.argv[2]);
const hwpjs = require(path.join(readers, 'node_modules/@ohah/hwpjs/dist/index.js'));
for (const file of process.argv.slice(3)) {
  const row = {file};
  try {
    const result = hwpjs.toMarkdown(fs.readFileSync(file), {image: 'blob'});
    row.markdown = result.markdown;
    row.images = (result.images || []).map(
        (i) => ({id: i.id, format: i.format, data: Buffer.from(i.data).toString('base64')}));
  } catch (e) {
    row.error = String(e);
  }
  process.stdout.write(JSON.stringify(row) + '\n');
}
