// The template backend's placeholders are documented in ./backends/template.ts; re-exported here
// (CONTRACTS.md points at src/routes/template.ts).
export { TEMPLATE_PLACEHOLDERS, parseTemplate, expandTemplate, templateProgram } from './backends/template.js';
