// Every /v1 route of spec section 7 (plus our additions, marked), as a table: the contract test
// checks the descriptors against it, and the edge drives each route through a running server.
export type Row = [verb: string, path: string, body: string, method: string, origin?: string];

const ws = "workspaces/*";

// Get, list, create (id in the query) and delete, as section 7 "Collections" and "Get and
// delete" give them for every collection; update where section 7 "Update" names the kind.
function collection(
  pkg: string,
  kind: string,
  segment: string,
  field: string,
  parent: string,
  ops: { update?: boolean; origin?: string } = {},
): Row[] {
  const plural = kind.endsWith("s") ? `${kind}es` : `${kind}s`;
  const s = `enginemanager.${pkg}.${kind}Service`;
  const rows: Row[] = [
    ["POST", `/v1/{parent=${parent}}/${segment}`, field, `${s}.Create${kind}`, ops.origin],
    ["GET", `/v1/{name=${parent}/${segment}/*}`, "", `${s}.Get${kind}`, ops.origin],
    ["GET", `/v1/{parent=${parent}}/${segment}`, "", `${s}.List${plural}`, ops.origin],
    ["DELETE", `/v1/{name=${parent}/${segment}/*}`, "", `${s}.Delete${kind}`, ops.origin],
  ];
  if (ops.update) {
    rows.push(["PATCH", `/v1/{${field}.name=${parent}/${segment}/*}`, field, `${s}.Update${kind}`, ops.origin]);
  }
  return rows;
}

function custom(pkg: string, kind: string, segment: string, verb: string, rpc: string, http = "POST"): Row {
  const body = http === "GET" ? "" : "*";
  return [http, `/v1/{name=${ws}/${segment}/*}:${verb}`, body, `enginemanager.${pkg}.${kind}Service.${rpc}`];
}

const sandbox = `${ws}/sandboxEngines/*`;
const fsRow = (http: string, verb: string, rpc: string): Row => [
  http,
  `/v1/{name=${sandbox}}/filesystem:${verb}`,
  http === "GET" ? "" : "*",
  `enginemanager.sandbox.v1.FilesystemService.${rpc}`,
];
const processRow = (http: string, verb: string, rpc: string): Row => [
  http,
  `/v1/{name=${sandbox}/processes/*}:${verb}`,
  http === "GET" ? "" : "*",
  `enginemanager.sandbox.v1.ProcessService.${rpc}`,
];

export const specRoutes: readonly Row[] = [
  // Engines.
  ...collection("v1", "DAIEngine", "daiEngines", "dai_engine", ws, { update: true }),
  custom("v1", "DAIEngine", "daiEngines", "pause", "PauseDAIEngine"),
  custom("v1", "DAIEngine", "daiEngines", "resume", "ResumeDAIEngine"),
  custom("v1", "DAIEngine", "daiEngines", "downloadLogs", "DownloadDAIEngineLogs"),
  custom("v1", "DAIEngine", "daiEngines", "migrateCreator", "MigrateDAIEngineCreator"),
  custom("v1", "DAIEngine", "daiEngines", "resizeStorage", "ResizeDAIEngineStorage"),
  custom("v1", "DAIEngine", "daiEngines", "upgradeDAIEngineVersion", "UpgradeDAIEngineVersion"),
  ...collection("v1", "H2OEngine", "h2oEngines", "h2o_engine", ws),
  custom("v1", "H2OEngine", "h2oEngines", "terminate", "TerminateH2OEngine"),
  custom("v1", "H2OEngine", "h2oEngines", "downloadLogs", "DownloadH2OEngineLogs"),
  [
    "POST",
    "/v1/h2oEngines:calculateH2OEngineSizeCompressedDataset",
    "*",
    "enginemanager.v1.H2OEngineService.CalculateH2OEngineSizeCompressedDataset",
  ],
  [
    "POST",
    "/v1/h2oEngines:calculateH2OEngineSizeRawDataset",
    "*",
    "enginemanager.v1.H2OEngineService.CalculateH2OEngineSizeRawDataset",
  ],
  [
    "GET",
    "/v1/daiLicenseMetadata",
    "",
    "enginemanager.v1.DAILicenseService.GetDAILicenseMetadata",
    "addition: the official Python client reads it",
  ],
  ...collection("v1", "NotebookEngine", "notebookEngines", "notebook_engine", ws, { update: true }),
  custom("v1", "NotebookEngine", "notebookEngines", "pause", "PauseNotebookEngine"),
  custom("v1", "NotebookEngine", "notebookEngines", "resume", "ResumeNotebookEngine"),
  custom("v1", "NotebookEngine", "notebookEngines", "resizeStorage", "ResizeNotebookEngineStorage"),
  custom("v1", "NotebookEngine", "notebookEngines", "access", "AccessNotebookEngine", "GET"),
  ["GET", `/v1/{parent=${ws}}/engines`, "", "enginemanager.v1.EngineService.ListEngines"],

  // Profiles: CRUD, :copy and :listAssigned.
  ...(["DAI", "H2O", "Notebook"] as const).flatMap((k): Row[] => {
    const kind = `${k}EngineProfile`;
    const segment = `${k === "DAI" ? "dai" : k === "H2O" ? "h2o" : "notebook"}EngineProfiles`;
    const field = `${k === "DAI" ? "dai" : k === "H2O" ? "h2o" : "notebook"}_engine_profile`;
    return [
      ...collection("v1", kind, segment, field, ws, { update: true }),
      custom("v1", kind, segment, "copy", `Copy${kind}`),
      ["GET", `/v1/{parent=${ws}}/${segment}:listAssigned`, "", `enginemanager.v1.${kind}Service.ListAssigned${kind}s`],
    ];
  }),

  // Versions: CRUD and :assignAliases.
  ...collection("v1", "DAIEngineVersion", "daiEngineVersions", "dai_engine_version", ws, { update: true }),
  custom("v1", "DAIEngineVersion", "daiEngineVersions", "assignAliases", "AssignDAIEngineVersionAliases"),
  ...collection("v1", "H2OEngineVersion", "h2oEngineVersions", "h2o_engine_version", ws, { update: true }),
  custom("v1", "H2OEngineVersion", "h2oEngineVersions", "assignAliases", "AssignH2OEngineVersionAliases"),

  // Images and templates.
  ...collection("v1", "NotebookEngineImage", "notebookEngineImages", "notebook_engine_image", ws, { update: true }),
  ...collection("v1", "SandboxEngineImage", "sandboxEngineImages", "sandbox_engine_image", ws, { update: true }),
  ...collection("v1", "SandboxEngineTemplate", "sandboxEngineTemplates", "sandbox_engine_template", ws, {
    update: true,
  }),

  // Secrets: our addition, so that the secure store has values to reveal.
  ...collection("v1", "Secret", "secrets", "secret", ws, { origin: "addition: secrets API" }),
  [
    "POST",
    `/v1/{parent=${ws}/secrets/*}/versions`,
    "secret_version",
    "enginemanager.v1.SecretVersionService.AddSecretVersion",
    "addition: secrets API",
  ],
  [
    "GET",
    `/v1/{name=${ws}/secrets/*/versions/*}`,
    "",
    "enginemanager.v1.SecretVersionService.GetSecretVersion",
    "addition: secrets API",
  ],
  [
    "GET",
    `/v1/{parent=${ws}/secrets/*}/versions`,
    "",
    "enginemanager.v1.SecretVersionService.ListSecretVersions",
    "addition: secrets API",
  ],

  // Sandbox engines and what is under them.
  ...collection("sandbox.v1", "SandboxEngine", "sandboxEngines", "sandbox_engine", ws),
  custom("sandbox.v1", "SandboxEngine", "sandboxEngines", "terminate", "TerminateSandboxEngine"),
  ...collection("sandbox.v1", "Port", "ports", "port", sandbox, { update: true }),
  ...collection("sandbox.v1", "Process", "processes", "process", sandbox),
  processRow("POST", "start", "StartProcess"),
  processRow("POST", "wait", "WaitProcess"),
  processRow("POST", "sendSignal", "SendProcessSignal"),
  processRow("GET", "readOutput", "ReadProcessOutput"),
  processRow("GET", "streamOutput", "StreamProcessOutput"),
  // From the official client (h2o-engine-manager 1.10.2), which the spec does not list.
  processRow("GET", "readOutputFrames", "ReadProcessOutputFrames"),
  fsRow("POST", "createDirectory", "CreateDirectory"),
  fsRow("POST", "makeDirectory", "MakeDirectory"),
  fsRow("GET", "listDirectory", "ListDirectory"),
  fsRow("POST", "move", "Move"),
  fsRow("GET", "readFile", "ReadFile"),
  fsRow("POST", "remove", "Remove"),
  fsRow("GET", "statFile", "StatFile"),
  fsRow("POST", "writeFile", "WriteFile"),
  ["POST", `/v1/{name=${sandbox}}/h2oDrive:downloadFile`, "*", "enginemanager.sandbox.v1.DriveService.DownloadFile"],
  ["POST", `/v1/{name=${sandbox}}/h2oDrive:uploadFile`, "*", "enginemanager.sandbox.v1.DriveService.UploadFile"],
  [
    "POST",
    `/v1/{name=${sandbox}}/h2oSecureStore:revealSecretToFile`,
    "*",
    "enginemanager.sandbox.v1.SecureStoreService.RevealSecretToFile",
  ],
  // From the official client, which the spec does not list.
  ["GET", `/v1/{name=${sandbox}}/metrics:read`, "", "enginemanager.sandbox.v1.MetricsService.ReadMetrics"],
];
