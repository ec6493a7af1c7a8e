// A structural validator for the part of SARIF 2.1.0 offhost emits, written from the OASIS schema
// (sarif-schema-2.1.0.json, draft-04): for each object kind, the properties the schema defines (the
// schema sets `additionalProperties: false` on its objects, so any other key is an error, except inside
// property bags), the required ones, types, enums and minimums. Returns a list of error paths.

type Json = unknown;
type Check = (v: Json, path: string, errs: string[]) => void;

const isObj = (v: Json): v is Record<string, Json> => typeof v === 'object' && v !== null && !Array.isArray(v);

function obj(known: Record<string, Check>, required: string[] = [], anyOf?: string[][]): Check {
  return (v, path, errs) => {
    if (!isObj(v)) return void errs.push(`${path}: expected an object`);
    for (const r of required) if (!(r in v)) errs.push(`${path}: missing required property '${r}'`);
    if (anyOf && !anyOf.some((set) => set.every((k) => k in v))) errs.push(`${path}: needs one of ${anyOf.map((s) => s.join('+')).join(' | ')}`);
    for (const [k, val] of Object.entries(v)) {
      const c = known[k];
      if (!c) errs.push(`${path}: unknown property '${k}'`);
      else c(val, `${path}.${k}`, errs);
    }
  };
}
const str: Check = (v, p, e) => void (typeof v !== 'string' && e.push(`${p}: expected a string`));
const bool: Check = (v, p, e) => void (typeof v !== 'boolean' && e.push(`${p}: expected a boolean`));
const int = (min: number): Check => (v, p, e) => void ((!Number.isInteger(v) || (v as number) < min) && e.push(`${p}: expected an integer >= ${min}`));
const num: Check = (v, p, e) => void (typeof v !== 'number' && e.push(`${p}: expected a number`));
const oneOf = (vals: string[]): Check => (v, p, e) => void (!vals.includes(v as string) && e.push(`${p}: '${String(v)}' not one of ${vals.join(', ')}`));
const arr = (item: Check, unique = false): Check => (v, p, e) => {
  if (!Array.isArray(v)) return void e.push(`${p}: expected an array`);
  v.forEach((x, i) => item(x, `${p}[${i}]`, e));
  if (unique && new Set(v.map((x) => JSON.stringify(x))).size !== v.length) e.push(`${p}: items must be unique`);
};
const mapOf = (item: Check): Check => (v, p, e) => {
  if (!isObj(v)) return void e.push(`${p}: expected an object`);
  for (const [k, x] of Object.entries(v)) item(x, `${p}.${k}`, e);
};
/** A URI reference (RFC 3986): no spaces, no raw control characters, `%` only as an escape. */
const uriRef: Check = (v, p, e) => {
  if (typeof v !== 'string') return void e.push(`${p}: expected a string`);
  if (/[\s"<>\\^`{|}\u0000-\u001f\u007f]/.test(v) || /%(?![0-9A-Fa-f]{2})/.test(v)) e.push(`${p}: not a valid URI reference: ${JSON.stringify(v)}`);
};
const propertyBag: Check = (v, p, e) => {
  if (!isObj(v)) return void e.push(`${p}: expected an object`);
  if ('tags' in v) arr(str, true)(v.tags, `${p}.tags`, e);
};

const multiformatMessageString = obj({ text: str, markdown: str, properties: propertyBag }, ['text']);
const message = obj({ text: str, markdown: str, id: str, arguments: arr(str), properties: propertyBag }, [], [['text'], ['id']]);
const artifactLocation = obj({ uri: uriRef, uriBaseId: str, index: int(-1), description: message, properties: propertyBag });
const region = obj({
  startLine: int(1), startColumn: int(1), endLine: int(1), endColumn: int(1), charOffset: int(-1), charLength: int(0),
  byteOffset: int(-1), byteLength: int(0), snippet: obj({ text: str, binary: str, rendered: multiformatMessageString, properties: propertyBag }),
  message, sourceLanguage: str, properties: propertyBag,
});
const physicalLocation = obj(
  { address: isObjCheck(), artifactLocation, region, contextRegion: region, properties: propertyBag },
  [],
  [['address'], ['artifactLocation']],
);
function isObjCheck(): Check {
  return (v, p, e) => void (!isObj(v) && e.push(`${p}: expected an object`));
}
const location = obj({ id: int(-1), physicalLocation, logicalLocations: arr(isObjCheck()), message, annotations: arr(region), relationships: arr(isObjCheck()), properties: propertyBag });
const reportingConfiguration = obj({ enabled: bool, level: oneOf(['none', 'note', 'warning', 'error']), rank: num, parameters: propertyBag, properties: propertyBag });
const reportingDescriptor = obj(
  {
    id: str, deprecatedIds: arr(str, true), guid: str, deprecatedGuids: arr(str, true), name: str, deprecatedNames: arr(str, true),
    shortDescription: multiformatMessageString, fullDescription: multiformatMessageString, messageStrings: mapOf(multiformatMessageString),
    defaultConfiguration: reportingConfiguration, helpUri: uriRef, help: multiformatMessageString, relationships: arr(isObjCheck()), properties: propertyBag,
  },
  ['id'],
);
const toolComponent = obj(
  {
    guid: str, name: str, organization: str, product: str, productSuffix: str, shortDescription: multiformatMessageString,
    fullDescription: multiformatMessageString, fullName: str, version: str, semanticVersion: str, dottedQuadFileVersion: str,
    releaseDateUtc: str, downloadUri: uriRef, informationUri: uriRef, globalMessageStrings: mapOf(multiformatMessageString),
    notifications: arr(reportingDescriptor, true), rules: arr(reportingDescriptor, true), taxa: arr(reportingDescriptor, true),
    locations: arr(artifactLocation), language: str, contents: arr(oneOf(['localizedData', 'nonLocalizedData'])),
    isComprehensive: bool, localizedDataSemanticVersion: str, minimumRequiredLocalizedDataSemanticVersion: str,
    associatedComponent: isObjCheck(), translationMetadata: isObjCheck(), supportedTaxonomies: arr(isObjCheck()), properties: propertyBag,
  },
  ['name'],
);
const tool = obj({ driver: toolComponent, extensions: arr(toolComponent, true), properties: propertyBag }, ['driver']);
const result = obj(
  {
    ruleId: str, ruleIndex: int(-1), rule: isObjCheck(), kind: oneOf(['notApplicable', 'pass', 'fail', 'review', 'open', 'informational']),
    level: oneOf(['none', 'note', 'warning', 'error']), message, analysisTarget: artifactLocation, locations: arr(location),
    guid: str, correlationGuid: str, occurrenceCount: int(1), partialFingerprints: mapOf(str), fingerprints: mapOf(str),
    stacks: arr(isObjCheck()), codeFlows: arr(isObjCheck()), graphs: arr(isObjCheck()), graphTraversals: arr(isObjCheck()),
    relatedLocations: arr(location), suppressions: arr(isObjCheck()), baselineState: oneOf(['new', 'unchanged', 'updated', 'absent']),
    rank: num, attachments: arr(isObjCheck()), hostedViewerUri: uriRef, workItemUris: arr(uriRef), provenance: isObjCheck(),
    fixes: arr(isObjCheck()), taxa: arr(isObjCheck()), webRequest: isObjCheck(), webResponse: isObjCheck(), properties: propertyBag,
  },
  ['message'],
);
const run = obj(
  {
    tool, invocations: arr(isObjCheck()), conversion: isObjCheck(), language: str, versionControlProvenance: arr(isObjCheck()),
    originalUriBaseIds: mapOf(artifactLocation), artifacts: arr(isObjCheck()), logicalLocations: arr(isObjCheck()), graphs: arr(isObjCheck()),
    results: arr(result), automationDetails: isObjCheck(), runAggregates: arr(isObjCheck()), baselineGuid: str, redactionReleases: arr(str),
    defaultEncoding: str, defaultSourceLanguage: str, newlineSequences: arr(str), columnKind: oneOf(['utf16CodeUnits', 'unicodeCodePoints']),
    externalPropertyFileReferences: isObjCheck(), threadFlowLocations: arr(isObjCheck()), taxonomies: arr(toolComponent),
    addresses: arr(isObjCheck()), translations: arr(toolComponent), policies: arr(toolComponent), webRequests: arr(isObjCheck()),
    webResponses: arr(isObjCheck()), specialLocations: isObjCheck(), properties: propertyBag,
  },
  ['tool'],
);
const sarifLog = obj({ $schema: uriRef, version: oneOf(['2.1.0']), runs: arr(run), inlineExternalProperties: arr(isObjCheck()), properties: propertyBag }, ['version', 'runs']);

export function validateSarif(doc: unknown): string[] {
  const errs: string[] = [];
  sarifLog(doc, '$', errs);
  // Cross-reference checks the schema cannot express (SARIF §3.27.6, §3.52.3).
  if (isObj(doc) && Array.isArray(doc.runs)) {
    for (const [ri, r] of (doc.runs as Json[]).entries()) {
      if (!isObj(r) || !isObj(r.tool) || !isObj(r.tool.driver)) continue;
      const rules = Array.isArray(r.tool.driver.rules) ? (r.tool.driver.rules as Record<string, Json>[]) : [];
      const ids = rules.map((x) => x.id);
      if (new Set(ids).size !== ids.length) errs.push(`$.runs[${ri}].tool.driver.rules: duplicate ids`);
      const results = Array.isArray(r.results) ? (r.results as Record<string, Json>[]) : [];
      results.forEach((res, i) => {
        if (typeof res.ruleIndex === 'number' && res.ruleIndex >= 0 && rules[res.ruleIndex]?.id !== res.ruleId)
          errs.push(`$.runs[${ri}].results[${i}]: ruleIndex does not point at ruleId`);
        for (const loc of (res.locations as Record<string, Json>[] | undefined) ?? []) {
          const pl = loc.physicalLocation as Record<string, Json> | undefined;
          const al = pl?.artifactLocation as Record<string, Json> | undefined;
          if (al && typeof al.uri === 'string' && al.uri.startsWith('/')) errs.push(`$.runs[${ri}].results[${i}]: uri must be relative to its uriBaseId`);
          const rg = pl?.region as Record<string, number> | undefined;
          if (rg?.endLine !== undefined && rg.startLine !== undefined && rg.endLine < rg.startLine) errs.push(`$.runs[${ri}].results[${i}]: endLine before startLine`);
        }
      });
    }
  }
  return errs;
}
