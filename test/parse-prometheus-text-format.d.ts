/** Types of the parse-prometheus-text-format package (it ships none): the text exposition format to metric families. */
declare module "parse-prometheus-text-format" {
  export default function parsePrometheusTextFormat(text: string): unknown[];
}
