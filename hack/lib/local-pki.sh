#!/usr/bin/env bash
# PKI, kubeconfig and KWOK manifests for the local control plane. Sourced by hack/local-cluster.sh,
# which sets STATE_DIR, APISERVER_PORT, NODES and KWOK_VERSION. Everything is written once and kept
# across `up` calls, so a restarted component trusts the same CA as the running ones.

PKI_DIR() { echo "${STATE_DIR}/pki"; }

# new_key writes an ECDSA P-256 private key: as good as RSA here and generated in milliseconds
# (RSA-2048 takes ~1s per key on a loaded 2-core machine).
new_key() {
  openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1" 2>/dev/null
}

# sign_cert creates <name>.key and <name>.crt signed by <ca> with the given subject and extensions.
# Args: <name> <ca name> <subject> <extensions (openssl x509v3 config lines)>
sign_cert() {
  local name="$1" ca="$2" subj="$3" ext="$4" dir
  dir="$(PKI_DIR)"
  new_key "${dir}/${name}.key"
  openssl req -new -key "${dir}/${name}.key" -subj "${subj}" -out "${dir}/${name}.csr" 2>/dev/null
  printf '%s\n' "${ext}" >"${dir}/${name}.ext"
  openssl x509 -req -in "${dir}/${name}.csr" -CA "${dir}/${ca}.crt" -CAkey "${dir}/${ca}.key" \
    -CAcreateserial -days 3650 -sha256 -extfile "${dir}/${name}.ext" -out "${dir}/${name}.crt" 2>/dev/null
  rm -f "${dir}/${name}.csr" "${dir}/${name}.ext"
}

# new_ca creates a self-signed CA <name>.key/<name>.crt.
new_ca() {
  local name="$1" cn="$2" dir
  dir="$(PKI_DIR)"
  new_key "${dir}/${name}.key"
  openssl req -x509 -new -nodes -key "${dir}/${name}.key" -subj "/CN=${cn}" -days 3650 -sha256 \
    -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign,digitalSignature" \
    -out "${dir}/${name}.crt" 2>/dev/null
}

# ensure_pki generates the cluster CA, the apiserver serving cert, the admin client cert
# (O=system:masters), the front-proxy CA and client cert, and the service-account key pair (ES256).
ensure_pki() {
  local dir client_ext
  dir="$(PKI_DIR)"
  [[ -f "${dir}/done" ]] && return 0
  command -v openssl >/dev/null || die "openssl is not installed: run 'apt-get install -y openssl'"
  rm -rf "${dir}"
  mkdir -p "${dir}"
  chmod 700 "${dir}"
  client_ext=$'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=clientAuth'
  new_ca ca kubetidb-local-ca
  sign_cert apiserver ca "/CN=kube-apiserver" \
    $'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\n'"subjectAltName=IP:127.0.0.1,IP:10.96.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local"
  sign_cert admin ca "/O=system:masters/CN=kubetidb-admin" "${client_ext}"
  new_ca front-proxy-ca kubetidb-front-proxy-ca
  sign_cert front-proxy-client front-proxy-ca "/CN=front-proxy-client" "${client_ext}"
  new_key "${dir}/sa.key"
  openssl pkey -in "${dir}/sa.key" -pubout -out "${dir}/sa.pub" 2>/dev/null
  touch "${dir}/done"
}

# write_kubeconfig writes a self-contained admin kubeconfig (certificates inlined) to KUBECONFIG_FILE.
write_kubeconfig() {
  local dir
  dir="$(PKI_DIR)"
  cat >"${KUBECONFIG_FILE}.tmp" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: kubetidb-local
  cluster:
    server: https://127.0.0.1:${APISERVER_PORT}
    certificate-authority-data: $(base64 -w0 <"${dir}/ca.crt")
users:
- name: kubetidb-admin
  user:
    client-certificate-data: $(base64 -w0 <"${dir}/admin.crt")
    client-key-data: $(base64 -w0 <"${dir}/admin.key")
contexts:
- name: kubetidb-local
  context:
    cluster: kubetidb-local
    user: kubetidb-admin
current-context: kubetidb-local
EOF
  chmod 600 "${KUBECONFIG_FILE}.tmp"
  mv "${KUBECONFIG_FILE}.tmp" "${KUBECONFIG_FILE}"
}

# kwok_stage_dir prints the directory of KWOK's shipped Stage manifests in its module source.
kwok_stage_dir() {
  local dir
  dir="$(module_file sigs.k8s.io/kwok "${KWOK_VERSION}" Dir)"
  [[ -d "${dir}/kustomize/stage" ]] || die "sigs.k8s.io/kwok@${KWOK_VERSION} has no kustomize/stage directory"
  echo "${dir}/kustomize/stage"
}

# write_kwok_config writes ${STATE_DIR}/kwok.yaml: the fast node, pod and volume Stages, and
# ${STATE_DIR}/storage-class.yaml: KWOK's default StorageClass (without it PVCs stay Pending), and
# kwok-expandable, the same with allowVolumeExpansion (the volume stages serve both; the simulator plays
# the CSI resizer for it).
write_kwok_config() {
  local stages f
  [[ -f "${STATE_DIR}/kwok.yaml" && -f "${STATE_DIR}/storage-class.yaml" ]] && return 0
  stages="$(kwok_stage_dir)"
  : >"${STATE_DIR}/kwok.yaml.tmp"
  for f in node/fast/node-initialize node/heartbeat-with-lease/node-heartbeat-with-lease \
    pod/fast/pod-ready pod/fast/pod-complete pod/fast/pod-delete \
    volume/fast/pvc-provision volume/fast/pv-bind volume/fast/pv-delete volume/fast/pvc-delete; do
    [[ -f "${stages}/${f}.yaml" ]] || die "KWOK ${KWOK_VERSION} does not ship ${stages}/${f}.yaml"
    {
      echo "---"
      sed "s/self.spec.storageClassName == 'kwok-volume'/self.spec.storageClassName in ['kwok-volume', 'kwok-expandable']/" \
        "${stages}/${f}.yaml"
    } >>"${STATE_DIR}/kwok.yaml.tmp"
  done
  mv "${STATE_DIR}/kwok.yaml.tmp" "${STATE_DIR}/kwok.yaml"
  {
    cat "${stages}/volume/fast/storage-class.yaml"
    cat <<'EOF'
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: kwok-expandable
provisioner: kwok.x-k8s.io/volume
reclaimPolicy: Delete
volumeBindingMode: Immediate
allowVolumeExpansion: true
EOF
  } >"${STATE_DIR}/storage-class.yaml"
}

# nodes_yaml prints NODES fake Nodes managed by KWOK, spread over three zones, with room for
# hundreds of pods each. KWOK's node-initialize stage keeps the capacity given here.
nodes_yaml() {
  local i zones=(a b c)
  for ((i = 0; i < NODES; i++)); do
    cat <<EOF
---
apiVersion: v1
kind: Node
metadata:
  name: kwok-node-${i}
  annotations:
    kwok.x-k8s.io/node: fake
    node.alpha.kubernetes.io/ttl: "0"
  labels:
    type: kwok
    kubernetes.io/arch: amd64
    kubernetes.io/os: linux
    kubernetes.io/hostname: kwok-node-${i}
    topology.kubernetes.io/region: local
    topology.kubernetes.io/zone: zone-${zones[i % 3]}
status:
  capacity:
    cpu: "${NODE_CPU}"
    memory: ${NODE_MEMORY}
    ephemeral-storage: 1Ti
    pods: "${NODE_PODS}"
  allocatable:
    cpu: "${NODE_CPU}"
    memory: ${NODE_MEMORY}
    ephemeral-storage: 1Ti
    pods: "${NODE_PODS}"
EOF
  done
}
