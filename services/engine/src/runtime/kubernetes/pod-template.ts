// The profile's `yaml_pod_template_spec` merge is shared with the sandbox runtime (@aiem/kit/kubernetes).
export { mergePodTemplate, type PodTemplate } from "@aiem/kit/kubernetes";
