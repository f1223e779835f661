/** An error the console's error handler answers as a page with this status and message (a 404 for another agency's id). */
export const pageError = (statusCode: number, message: string) => Object.assign(new Error(message), { statusCode });
