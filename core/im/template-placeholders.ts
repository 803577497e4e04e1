/** A placeholder of an Intelligent Messaging template body: whatever stands between `{{` and `}}`. */
const PLACEHOLDER = /\{\{\s*([^{}]*?)\s*\}\}/g;

/** What a send's parameter may be named: Intelligent Messaging's ShortString (letters A–Z, digits, hyphen, underscore, space). */
const PARAMETER_NAME = /^[A-Za-z0-9 _-]+$/;

export interface TemplatePlaceholders {
  /** The parameters the body names, each once, in order. */
  names: string[];
  /** Placeholders no parameter can fill (`{{ōta}}`, `{{}}`), as written. */
  unfillable: string[];
}

/** The placeholders of a template body. */
export function placeholdersOf(body: string): TemplatePlaceholders {
  const names = new Set<string>();
  const unfillable = new Set<string>();
  for (const [whole, name] of body.matchAll(PLACEHOLDER)) {
    if (PARAMETER_NAME.test(name!)) names.add(name!);
    else unfillable.add(whole);
  }
  return { names: [...names], unfillable: [...unfillable] };
}

/** Why a template body cannot be stored or sent, or undefined when every placeholder can be filled. */
export function unfillableProblem(placeholders: TemplatePlaceholders): string | undefined {
  if (placeholders.unfillable.length === 0) return undefined;
  return (
    `template placeholder${placeholders.unfillable.length === 1 ? '' : 's'} ${placeholders.unfillable.join(', ')} cannot be filled: ` +
    'a parameter name is letters A–Z, digits, hyphens, underscores and spaces'
  );
}

/** The body with each placeholder a parameter names replaced by its value. */
export function fillTemplate(body: string, values: ReadonlyMap<string, string>): string {
  return body.replace(PLACEHOLDER, (whole, name: string) => values.get(name) ?? whole);
}
