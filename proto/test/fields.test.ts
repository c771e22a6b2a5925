// Every field that spec section 3 names, on its message, with the spec's type and behaviour;
// every state of section 4; and the conventions of ARCHITECTURE.md, "API conventions", on every message.
import { describe, expect, it } from "vitest";
import { getOption, ScalarType, type DescField, type DescMessage } from "@bufbuild/protobuf";
import { field_behavior as fieldBehavior, FieldBehavior } from "@aiem/proto/google/api/field_behavior_pb.js";
import { loadRegistry } from "./descriptors.js";

const registry = loadRegistry();

function message(typeName: string): DescMessage {
  const desc = registry.getMessage(typeName);
  if (!desc) throw new Error(`no message ${typeName}`);
  return desc;
}

// A field's type as the spec talks about it.
function typeOf(f: DescField): string {
  switch (f.fieldKind) {
    case "scalar":
      return ScalarType[f.scalar].toLowerCase().replace(/^(s|u)?fixed|^s(?=int)|^u(?=int)/, "");
    case "enum":
      return `enum ${f.enum.name}`;
    case "message":
      return f.message.typeName === "google.protobuf.Timestamp"
        ? "timestamp"
        : f.message.typeName === "google.protobuf.Duration"
          ? "duration"
          : f.message.typeName === "google.protobuf.FieldMask"
            ? "mask"
            : f.message.name;
    case "list":
      return `${f.listKind === "scalar" ? ScalarType[f.scalar].toLowerCase() : f.listKind === "enum" ? f.enum.name : f.message.name}[]`;
    case "map":
      return `map<string,${f.mapKind === "scalar" ? ScalarType[f.scalar].toLowerCase() : f.mapKind === "enum" ? f.enum.name : f.message.name}>`;
  }
}

function behaviours(f: DescField): string[] {
  return getOption(f, fieldBehavior).map((b) => FieldBehavior[b]);
}

// "jsonName: type BEHAVIOUR..." as the spec gives them. Behaviours listed must be present.
type Spec = Record<string, string[]>;

const audit = [
  "createTime: timestamp OUTPUT_ONLY",
  "updateTime: timestamp OUTPUT_ONLY",
  "creator: string OUTPUT_ONLY",
  "updater: string OUTPUT_ONLY",
  "creatorDisplayName: string OUTPUT_ONLY",
  "updaterDisplayName: string OUTPUT_ONLY",
];
const engineResources = [
  "cpu: int32 OPTIONAL",
  "gpu: int32 OPTIONAL",
  "memoryBytes: int64 OPTIONAL",
  "maxIdleDuration: duration OPTIONAL",
  "maxRunningDuration: duration OPTIONAL",
  "currentIdleDuration: duration OUTPUT_ONLY",
  "currentRunningDuration: duration OUTPUT_ONLY",
];
const profileCommon = [
  "name: string IDENTIFIER",
  "displayName: string",
  "priority: int32",
  "enabled: bool",
  "assignedOidcRolesEnabled: bool",
  "assignedOidcRoles: string[]",
  "maxRunningEngines: int32",
  "cpuConstraint: ProfileConstraintNumeric",
  "gpuConstraint: ProfileConstraintNumeric",
  "memoryBytesConstraint: ProfileConstraintNumeric",
  "maxIdleDurationConstraint: ProfileConstraintDuration",
  "maxRunningDurationConstraint: ProfileConstraintDuration",
  "yamlPodTemplateSpec: string",
  "yamlGpuTolerations: string",
  "gpuResourceName: string",
  ...audit,
];
const version = [
  "name: string IDENTIFIER",
  "deprecated: bool",
  "aliases: string[]",
  "image: string REQUIRED",
  "imagePullPolicy: enum ImagePullPolicy",
  "imagePullSecrets: string[]",
  ...audit,
];
const image = [
  "name: string IDENTIFIER",
  "displayName: string",
  "image: string REQUIRED",
  "enabled: bool",
  "imagePullPolicy: enum ImagePullPolicy",
  "imagePullSecrets: string[]",
  ...audit,
];
const template = [
  "name: string IDENTIFIER",
  "displayName: string",
  "milliCpuRequest: int32",
  "milliCpuLimit: int32",
  "gpuResource: string",
  "gpu: int32",
  "memoryBytesRequest: int64",
  "memoryBytesLimit: int64",
  "storageBytes: int64",
  "storageClassName: string",
  "environmentalVariables: map<string,string>",
  "yamlPodTemplateSpec: string",
  "enabled: bool",
  "maxIdleDuration: duration",
  // The official client (h2o-engine-manager 1.10.2) requires it; ours defaults it to 8h.
  "maxRunningDuration: duration",
];

const spec: Spec = {
  "enginemanager.v1.DAIEngine": [
    "name: string IDENTIFIER",
    "uid: string OUTPUT_ONLY",
    "creator: string OUTPUT_ONLY",
    "creatorDisplayName: string OUTPUT_ONLY",
    "profile: string REQUIRED",
    "profileInfo: DAIEngineProfile OUTPUT_ONLY",
    "state: enum State OUTPUT_ONLY",
    "reconciling: bool OUTPUT_ONLY",
    "storageResizing: bool OUTPUT_ONLY",
    "totalDiskSizeBytes: int64 OUTPUT_ONLY",
    "freeDiskSizeBytes: int64 OUTPUT_ONLY",
    "createTime: timestamp OUTPUT_ONLY",
    "deleteTime: timestamp OUTPUT_ONLY",
    "updateTime: timestamp OUTPUT_ONLY",
    "resumeTime: timestamp OUTPUT_ONLY",
    "apiUrl: string OUTPUT_ONLY",
    "loginUrl: string OUTPUT_ONLY",
    "annotations: map<string,string> OPTIONAL",
    "displayName: string OPTIONAL",
    "storageBytes: int64 OPTIONAL",
    "config: map<string,string> OPTIONAL",
    "upgradeAvailable: bool OUTPUT_ONLY",
    "daiEngineVersion: string REQUIRED",
    "daiEngineVersionInfo: DAIEngineVersion OUTPUT_ONLY",
    "dataDirectoryStorageClass: string OUTPUT_ONLY",
    ...engineResources,
  ],
  "enginemanager.v1.H2OEngine": [
    "name: string IDENTIFIER",
    "uid: string OUTPUT_ONLY",
    "creator: string OUTPUT_ONLY",
    "creatorDisplayName: string OUTPUT_ONLY",
    "profile: string REQUIRED",
    "profileInfo: H2OEngineProfile OUTPUT_ONLY",
    "state: enum State OUTPUT_ONLY",
    "reconciling: bool OUTPUT_ONLY",
    "createTime: timestamp OUTPUT_ONLY",
    "deleteTime: timestamp OUTPUT_ONLY",
    "updateTime: timestamp OUTPUT_ONLY",
    "resumeTime: timestamp OUTPUT_ONLY",
    "apiUrl: string OUTPUT_ONLY",
    "loginUrl: string OUTPUT_ONLY",
    "annotations: map<string,string> OPTIONAL",
    "displayName: string OPTIONAL",
    "nodeCount: int32 OPTIONAL",
    "h2oEngineVersion: string REQUIRED IMMUTABLE",
    "h2oEngineVersionInfo: H2OEngineVersion OUTPUT_ONLY",
    ...engineResources,
  ],
  "enginemanager.v1.NotebookEngine": [
    "name: string IDENTIFIER",
    "displayName: string OPTIONAL",
    "profile: string REQUIRED",
    "notebookImage: string REQUIRED IMMUTABLE",
    "storageBytes: int64 OPTIONAL",
    "state: enum State OUTPUT_ONLY",
    "reconciling: bool OUTPUT_ONLY",
    "uid: string OUTPUT_ONLY",
    "notebookImageInfo: NotebookEngineImage OUTPUT_ONLY",
    "profileInfo: NotebookEngineProfile OUTPUT_ONLY",
    "resumeTime: timestamp OUTPUT_ONLY",
    "deleteTime: timestamp OUTPUT_ONLY",
    "storageClassName: string OUTPUT_ONLY",
    "shared: bool OPTIONAL",
    "failureReason: enum FailureReason OUTPUT_ONLY",
    "storageResizing: bool OUTPUT_ONLY",
    ...audit,
    ...engineResources,
  ],
  "enginemanager.sandbox.v1.SandboxEngine": [
    "name: string IDENTIFIER",
    "displayName: string OPTIONAL",
    "uid: string OUTPUT_ONLY",
    "state: enum State OUTPUT_ONLY",
    "creator: string OUTPUT_ONLY",
    "creatorDisplayName: string OUTPUT_ONLY",
    "createTime: timestamp OUTPUT_ONLY",
    "sandboxEngineImage: string REQUIRED IMMUTABLE",
    "sandboxEngineImageInfo: SandboxEngineImageInfo OUTPUT_ONLY",
    "sandboxEngineTemplate: string REQUIRED IMMUTABLE",
    "sandboxEngineTemplateInfo: SandboxEngineTemplateInfo OUTPUT_ONLY",
    "currentIdleDuration: duration OUTPUT_ONLY",
    "annotations: map<string,string> OPTIONAL",
    // From the official client.
    "pendingReason: enum PendingReason OUTPUT_ONLY",
    "pendingMessage: string OUTPUT_ONLY",
  ],
  "enginemanager.v1.Engine": [
    "type: enum Type OUTPUT_ONLY",
    "state: enum State OUTPUT_ONLY",
    "version: string OUTPUT_ONLY",
    "deprecatedVersion: bool OUTPUT_ONLY",
    "deletedVersion: bool OUTPUT_ONLY",
    "visitable: bool OUTPUT_ONLY",
    "cpu: int32 OUTPUT_ONLY",
    "gpu: int32 OUTPUT_ONLY",
    "memoryBytes: int64 OUTPUT_ONLY",
    "storageBytes: int64 OUTPUT_ONLY",
    "maxIdleDuration: duration OUTPUT_ONLY",
    "maxRunningDuration: duration OUTPUT_ONLY",
    "currentIdleDuration: duration OUTPUT_ONLY",
    "currentRunningDuration: duration OUTPUT_ONLY",
  ],
  "enginemanager.v1.DAIEngineProfile": [
    ...profileCommon,
    "storageBytesConstraint: ProfileConstraintNumeric",
    "maxNonInteractionDuration: duration",
    "maxUnusedDuration: duration",
    "configurationOverride: map<string,string>",
    "baseConfiguration: map<string,string>",
    "configEditability: enum ConfigEditability",
    "tritonEnabled: bool",
    "dataDirectoryStorageClass: string",
  ],
  "enginemanager.v1.H2OEngineProfile": [
    ...profileCommon,
    "nodeCountConstraint: ProfileConstraintNumeric",
    "javaClasspath: string",
    "javaOptions: string",
    "h2oOptions: string",
  ],
  "enginemanager.v1.NotebookEngineProfile": [
    ...profileCommon,
    "storageBytesConstraint: ProfileConstraintNumeric",
    "storageClassName: string",
    "syncGitRepositoryEnabled: bool",
    "gitRepository: string",
    "gitRef: string",
    "gitDirectoryName: string",
  ],
  "enginemanager.v1.ProfileConstraintNumeric": ["min: int64", "max: int64", "default: int64", "cumulativeMax: int64"],
  "enginemanager.v1.ProfileConstraintDuration": ["min: duration", "max: duration", "default: duration"],
  "enginemanager.v1.DAIEngineVersion": version,
  "enginemanager.v1.H2OEngineVersion": version,
  "enginemanager.v1.NotebookEngineImage": image,
  "enginemanager.v1.SandboxEngineImage": image,
  "enginemanager.v1.SandboxEngineTemplate": [
    ...template,
    "memoryBytesLimit: int64 REQUIRED",
    "maxIdleDuration: duration REQUIRED",
    "maxRunningDuration: duration OPTIONAL",
    ...audit,
  ],
  "enginemanager.sandbox.v1.SandboxEngineTemplateInfo": [
    ...template.map((f) => `${f.replace(/ IDENTIFIER$/, "")} OUTPUT_ONLY`),
    ...audit,
  ],
  "enginemanager.sandbox.v1.SandboxEngineImageInfo": [
    ...image.map((f) => f.replace(/ (IDENTIFIER|REQUIRED)$/, "")),
    ...audit,
  ],
  "enginemanager.sandbox.v1.Port": [
    "name: string IDENTIFIER",
    "displayName: string",
    "public: bool",
    "internalUrl: string OUTPUT_ONLY",
    "publicUrl: string OUTPUT_ONLY",
    ...audit,
    // From the official client, whose PortClient.wait polls for STATE_READY.
    "state: enum State OUTPUT_ONLY",
    "failureReason: string OUTPUT_ONLY",
  ],
  "enginemanager.sandbox.v1.Process": [
    "name: string IDENTIFIER",
    "command: string REQUIRED",
    "args: string[]",
    "workingDirectory: string",
    "environmentVariables: map<string,string>",
    "secretEnvironmentVariables: map<string,SecretEnvironmentVariable>",
    "state: enum State OUTPUT_ONLY",
    "exitCode: int32 OUTPUT_ONLY",
    "createTime: timestamp OUTPUT_ONLY",
    "startTime: timestamp OUTPUT_ONLY",
    "endTime: timestamp OUTPUT_ONLY",
  ],
  "enginemanager.sandbox.v1.SecretEnvironmentVariable": ["secretVersion: string REQUIRED"],
  "enginemanager.sandbox.v1.FileInfo": [
    "path: string",
    "size: int64",
    // The official client's values are FILE_TYPE_*, so the enum is a top-level FileType.
    "type: enum FileType",
    "modifyTime: timestamp",
    "mode: string",
  ],
  "enginemanager.v1.H2OEngineSize": ["nodeCount: int64", "memoryBytes: int64"],
  "enginemanager.v1.H2OEngineSizeLimits": [
    "memoryBytesPerNodeMin: int64 REQUIRED",
    "memoryBytesPerNodeMax: int64",
    "nodeCountMin: int64 REQUIRED",
    "nodeCountMax: int64",
  ],
  // Section 3 "Request fields".
  "enginemanager.sandbox.v1.CreateDirectoryRequest": ["path: string REQUIRED", "createParentDirectories: bool"],
  "enginemanager.sandbox.v1.MakeDirectoryRequest": ["path: string REQUIRED", "createParentDirectories: bool"],
  "enginemanager.sandbox.v1.MoveRequest": [
    "sourcePath: string REQUIRED",
    "destinationPath: string REQUIRED",
    "overwrite: bool",
    "createParentDirectories: bool",
  ],
  "enginemanager.sandbox.v1.RemoveRequest": ["path: string REQUIRED", "recursive: bool"],
  "enginemanager.sandbox.v1.WriteFileRequest": [
    "path: string REQUIRED",
    "content: bytes",
    "createParentDirectories: bool",
    "overwrite: bool",
    "mode: string",
  ],
  "enginemanager.sandbox.v1.WriteFileResponse": ["fileInfo: FileInfo"],
  // Shapes of the official client: `files`, and the file's information with its content.
  "enginemanager.sandbox.v1.ListDirectoryResponse": ["files: FileInfo[]"],
  "enginemanager.sandbox.v1.ReadFileResponse": ["content: bytes", "fileInfo: FileInfo"],
  "enginemanager.sandbox.v1.StatFileResponse": ["fileInfo: FileInfo"],
  "enginemanager.sandbox.v1.SendProcessSignalRequest": ["signal: int32 REQUIRED"],
  "enginemanager.sandbox.v1.ReadProcessOutputRequest": ["outputStream: enum OutputStream"],
  "enginemanager.sandbox.v1.ReadProcessOutputResponse": ["data: bytes"],
  "enginemanager.sandbox.v1.StreamProcessOutputRequest": ["skipReplay: bool"],
  "enginemanager.sandbox.v1.StreamProcessOutputResponse": ["stream: enum OutputStream", "data: bytes"],
  "enginemanager.sandbox.v1.CreateProcessRequest": ["processId: string", "autoRun: bool"],
  "enginemanager.sandbox.v1.CreatePortRequest": ["portId: string REQUIRED"],
  // The official client leaves the workspace out to mean the sandbox engine's own.
  "enginemanager.sandbox.v1.DownloadFileRequest": [
    "workspace: string OPTIONAL",
    "remotePath: string REQUIRED",
    "localPath: string REQUIRED",
    "createParentDirectories: bool",
    "overwrite: bool",
  ],
  "enginemanager.sandbox.v1.UploadFileRequest": [
    "workspace: string OPTIONAL",
    "localPath: string REQUIRED",
    "remotePath: string REQUIRED",
  ],
  "enginemanager.sandbox.v1.UploadFileResponse": ["bytesUploaded: int64"],
  "enginemanager.sandbox.v1.RevealSecretToFileRequest": ["secretVersion: string REQUIRED", "path: string REQUIRED"],
  "enginemanager.sandbox.v1.RevealSecretToFileResponse": ["secretVersion: string", "fileInfo: FileInfo"],
  // Metrics and output frames, from the official client.
  "enginemanager.sandbox.v1.ReadMetricsRequest": ["name: string REQUIRED", "strictMode: bool OPTIONAL"],
  "enginemanager.sandbox.v1.ReadMetricsResponse": ["metrics: Metrics"],
  "enginemanager.sandbox.v1.Metrics": [
    "memory: MemoryMetrics",
    "disk: DiskMetrics",
    "cpu: CpuMetrics",
    "collectTime: timestamp",
  ],
  "enginemanager.sandbox.v1.MemoryMetrics": ["currentBytes: int64", "limitBytes: int64"],
  "enginemanager.sandbox.v1.DiskMetrics": ["totalBytes: int64", "availableBytes: int64"],
  "enginemanager.sandbox.v1.CpuMetrics": ["usageRatio: double"],
  "enginemanager.sandbox.v1.ReadProcessOutputFramesRequest": ["name: string REQUIRED"],
  "enginemanager.sandbox.v1.ReadProcessOutputFramesResponse": ["frames: OutputFrame[]"],
  "enginemanager.sandbox.v1.OutputFrame": ["stream: enum OutputStream", "data: bytes"],
  "enginemanager.v1.CopyDAIEngineProfileRequest": ["parent: string REQUIRED", "daiEngineProfileId: string REQUIRED"],
  "enginemanager.v1.CopyH2OEngineProfileRequest": ["parent: string REQUIRED", "h2oEngineProfileId: string REQUIRED"],
  "enginemanager.v1.CopyNotebookEngineProfileRequest": [
    "parent: string REQUIRED",
    "notebookEngineProfileId: string REQUIRED",
  ],
  "enginemanager.v1.ResizeDAIEngineStorageRequest": ["newStorageBytes: int64 REQUIRED"],
  "enginemanager.v1.ResizeNotebookEngineStorageRequest": ["newStorageBytes: int64 REQUIRED"],
  "enginemanager.v1.MigrateDAIEngineCreatorRequest": ["newCreator: string REQUIRED"],
  "enginemanager.v1.UpgradeDAIEngineVersionRequest": ["newDaiEngineVersion: string REQUIRED"],
  "enginemanager.v1.AssignDAIEngineVersionAliasesRequest": ["aliases: string[]"],
  "enginemanager.v1.AssignH2OEngineVersionAliasesRequest": ["aliases: string[]"],
  "enginemanager.v1.AccessNotebookEngineResponse": ["uri: string"],
  "enginemanager.v1.CalculateH2OEngineSizeCompressedDatasetRequest": ["rowsCount: int64", "columnsCount: int64"],
  "enginemanager.v1.CalculateH2OEngineSizeRawDatasetRequest": ["datasetSizeBytes: int64"],
  "enginemanager.v1.CreateDAIEngineRequest": ["daiEngineId: string REQUIRED", "validateOnly: bool"],
  "enginemanager.v1.CreateH2OEngineRequest": ["h2oEngineId: string REQUIRED", "validateOnly: bool"],
  "enginemanager.v1.UpdateDAIEngineRequest": ["updateMask: mask REQUIRED", "allowMissing: bool", "validateOnly: bool"],
  "enginemanager.v1.DeleteDAIEngineRequest": ["allowMissing: bool", "validateOnly: bool"],
  "enginemanager.v1.DeleteH2OEngineRequest": ["allowMissing: bool", "validateOnly: bool"],
  "enginemanager.v1.PauseDAIEngineRequest": ["validateOnly: bool"],
  "enginemanager.v1.ResumeDAIEngineRequest": ["validateOnly: bool"],
  "enginemanager.v1.CreateSandboxEngineRequest": ["sandboxEngineId: string REQUIRED"],
  "enginemanager.v1.CreateNotebookEngineImageRequest": ["notebookEngineImageId: string OPTIONAL"],
  "enginemanager.v1.CreateSandboxEngineImageRequest": ["sandboxEngineImageId: string OPTIONAL"],
  "enginemanager.v1.CreateSandboxEngineTemplateRequest": ["sandboxEngineTemplateId: string OPTIONAL"],
  "enginemanager.v1.SecretVersion": ["name: string IDENTIFIER", "value: bytes INPUT_ONLY"],
};
// The sandbox create request lives in the sandbox package.
spec["enginemanager.sandbox.v1.CreateSandboxEngineRequest"] = spec["enginemanager.v1.CreateSandboxEngineRequest"]!;
delete spec["enginemanager.v1.CreateSandboxEngineRequest"];

describe("spec section 3 fields", () => {
  for (const [typeName, fields] of Object.entries(spec)) {
    describe(typeName, () => {
      const desc = message(typeName);
      it.each(fields)("%s", (line) => {
        const [jsonName, rest] = line.split(": ") as [string, string];
        const parts = rest.split(" ");
        const wanted = parts.filter((p) => /^[A-Z_]+$/.test(p));
        const type = parts.filter((p) => !/^[A-Z_]+$/.test(p)).join(" ");
        const field = desc.fields.find((f) => f.jsonName === jsonName);
        expect(field, `${typeName}.${jsonName} is missing`).toBeDefined();
        expect(typeOf(field!)).toBe(type);
        expect(behaviours(field!)).toEqual(expect.arrayContaining(wanted));
      });
    });
  }
});

// Section 4, value names without their enum's prefix.
const states: Record<string, string[]> = {
  "enginemanager.sandbox.v1.SandboxEngine.State": [
    "STARTING",
    "RUNNING",
    "TERMINATING",
    "TERMINATED",
    "FAILED",
    "DELETING",
  ],
  "enginemanager.v1.DAIEngine.State": ["STARTING", "RUNNING", "PAUSING", "PAUSED", "FAILED", "DELETING", "CONNECTING"],
  "enginemanager.v1.H2OEngine.State": [
    "STARTING",
    "RUNNING",
    "PAUSING",
    "PAUSED",
    "FAILED",
    "DELETING",
    "CONNECTING",
    "TERMINATING",
    "TERMINATED",
  ],
  "enginemanager.v1.NotebookEngine.State": [
    "STARTING",
    "RUNNING",
    "PAUSING",
    "PAUSED",
    "FAILED",
    "DELETING",
    "TERMINATED",
  ],
  "enginemanager.v1.Engine.State": [
    "STARTING",
    "RUNNING",
    "PAUSING",
    "PAUSED",
    "FAILED",
    "DELETING",
    "CONNECTING",
    "TERMINATING",
    "TERMINATED",
  ],
  "enginemanager.sandbox.v1.Process.State": ["PENDING", "RUNNING", "SUCCEEDED", "FAILED"],
  "enginemanager.v1.NotebookEngine.FailureReason": ["UNKNOWN", "OOM_KILLED", "PROCESS_FAILED", "PVC_ACCESS_FAILURE"],
  "enginemanager.v1.Engine.Type": ["DRIVERLESS_AI", "H2O", "NOTEBOOK"],
  "enginemanager.v1.ImagePullPolicy": ["ALWAYS", "NEVER", "IF_NOT_PRESENT"],
  "enginemanager.sandbox.v1.FileType": ["REGULAR", "DIRECTORY", "SYMLINK"],
  "enginemanager.sandbox.v1.SandboxEngine.PendingReason": [
    "CREATING_RESOURCES",
    "SCHEDULING",
    "PULLING_IMAGE",
    "CONTAINER_CREATING",
    "WAITING_READINESS",
    "DELETING_RESOURCES",
  ],
  "enginemanager.sandbox.v1.Port.State": ["PENDING", "READY", "FAILED", "DELETING"],
  "enginemanager.sandbox.v1.OutputStream": ["STDOUT", "STDERR", "COMBINED"],
  "enginemanager.v1.DAIEngineProfile.ConfigEditability": ["DISABLED", "BASE_CONFIG_ONLY", "FULL"],
};

describe("spec section 4 states and enums", () => {
  it.each(Object.entries(states))("%s", (typeName, values) => {
    const desc = registry.getEnum(typeName);
    expect(desc, typeName).toBeDefined();
    const names = desc!.values.map((v) => v.name.slice(desc!.sharedPrefix?.length ?? 0));
    expect(names).toEqual(["UNSPECIFIED", ...values]);
  });

  it("marks the H2O pause states deprecated", () => {
    const h2o = registry.getEnum("enginemanager.v1.H2OEngine.State")!;
    const deprecated = h2o.values.filter((v) => v.deprecated).map((v) => v.name);
    expect(deprecated).toEqual(["STATE_PAUSING", "STATE_PAUSED"]);
  });
});
