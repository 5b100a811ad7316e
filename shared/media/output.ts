/** What public copies are: progressive JPEG (every browser, portal and feed reader takes it). */
export const OUTPUT_CONTENT_TYPE = 'image/jpeg'
export const OUTPUT_EXTENSION = 'jpg'
