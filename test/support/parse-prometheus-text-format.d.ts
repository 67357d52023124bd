/** Types of the parse-prometheus-text-format package (it ships none; a CommonJS module whose export is the function, hence the default export): the text exposition format to metric families. */
declare module "parse-prometheus-text-format" {
  export default function parsePrometheusTextFormat(text: string): unknown[];
}
