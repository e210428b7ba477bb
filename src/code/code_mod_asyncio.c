/* The asyncio module: run, gather, sleep and create_task over the
 * scheduler of code_sched.c. sleep never waits on a clock: any delay just
 * lets the other tasks run first. */
#include "code/code_eval.h"

#include <string.h>

static cv to_awaitable(code_vm *vm, cv a)
{
    if (cv_is(a, &code_type_coro) || cv_is(a, &code_type_gather) || cv_is(a, &code_type_sleep))
        return code_task_new(vm, a);
    if (cv_is(a, &code_type_future) || cv_is(a, &code_type_task))
        return code_incref(a);
    return code_raise(vm, &code_exc_TypeError,
                      "An asyncio.Future, a coroutine or an awaitable is required");
}

static cv aio_gather(code_vm *vm, cv *args, size_t nargs, cv kw)
{
    cv rexc = CODE_FALSE;
    size_t nk = kw ? ((code_tuple *)cv_obj(kw))->n : 0;
    for (size_t i = 0; i < nk; i++) {
        cv k = ((code_tuple *)cv_obj(kw))->v[i];
        if (!code_str_eq_cstr(k, "return_exceptions"))
            return code_raise(vm, &code_exc_TypeError,
                              "gather() got an unexpected keyword argument '%s'",
                              code_str_cstr(k));
        rexc = args[nargs + i];
    }
    cv ch = code_tuple_new(vm, nargs);
    if (!ch)
        return CV_NULL;
    for (size_t i = 0; i < nargs; i++) {
        cv a = to_awaitable(vm, args[i]);
        if (!a) {
            code_decref(vm, ch);
            return CV_NULL;
        }
        ((code_tuple *)cv_obj(ch))->v[i] = a;
    }
    code_gather *g = code_obj_new(vm, &code_type_gather, sizeof(code_gather));
    if (!g) {
        code_decref(vm, ch);
        return CV_NULL;
    }
    g->children = ch;
    int t = code_truth(vm, rexc);
    g->return_exceptions = t > 0;
    return cv_of(g);
}

static cv aio_run(code_vm *vm, cv *args, size_t nargs, cv kw)
{
    cv coro;
    if (code_args(vm, "run", args, nargs, kw, "main,/", &coro))
        return CV_NULL;
    if (vm->ev->task)
        return code_raise(vm, &code_exc_RuntimeError,
                          "asyncio.run() cannot be called from a running event loop");
    if (!cv_is(coro, &code_type_coro))
        return code_raise(vm, &code_exc_ValueError, "a coroutine was expected, got %s",
                          code_type_name(coro));
    cv t = code_task_new(vm, coro);
    if (!t)
        return CV_NULL;
    cv r = code_await_one(vm, t);
    code_decref(vm, t);
    return r;
}

static cv aio_sleep(code_vm *vm, cv *args, size_t nargs, cv kw)
{
    cv delay = CV_NULL, result = CODE_NONE;
    if (code_args(vm, "sleep", args, nargs, kw, "delay,|result", &delay, &result))
        return CV_NULL;
    double d;
    if (code_as_double(vm, delay, &d))
        return CV_NULL;
    code_sleep *s = code_obj_new(vm, &code_type_sleep, sizeof(code_sleep));
    if (!s)
        return CV_NULL;
    s->result = code_incref(result);
    return cv_of(s);
}

static cv aio_create_task(code_vm *vm, cv *args, size_t nargs, cv kw)
{
    cv coro, name = CV_NULL;
    if (code_args(vm, "create_task", args, nargs, kw, "coro,*,|name", &coro, &name))
        return CV_NULL;
    if (!cv_is(coro, &code_type_coro))
        return code_raise(vm, &code_exc_TypeError, "a coroutine was expected, got %s",
                          code_type_name(coro));
    return code_task_new(vm, coro);
}

#define AIO_FN(var, nm, f) \
    static code_cfunc_obj var = {.ob = {.type = &code_type_cfunc, .rc = CODE_RC_IMMORTAL}, \
                                 .name = nm, .fn = f}
AIO_FN(aio_gather_obj, "gather", aio_gather);
AIO_FN(aio_run_obj, "run", aio_run);
AIO_FN(aio_sleep_obj, "sleep", aio_sleep);
AIO_FN(aio_create_task_obj, "create_task", aio_create_task);

int code_mod_asyncio_init(code_vm *vm, cv dict)
{
    static code_cfunc_obj *const fns[] = {&aio_gather_obj, &aio_run_obj, &aio_sleep_obj,
                                          &aio_create_task_obj};
    for (size_t i = 0; i < sizeof(fns) / sizeof(fns[0]); i++) {
        cv k = code_str_intern(vm, fns[i]->name, strlen(fns[i]->name));
        if (!k || code_dict_set(vm, dict, k, cv_of(fns[i])))
            return -1;
    }
    return 0;
}
