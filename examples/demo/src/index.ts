export { slugify } from "./slugify.ts";
export { readingTime, wordCount } from "./words.ts";
