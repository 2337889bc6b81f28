from django.urls import path

from . import people_views, views

app_name = "studio"
urlpatterns = [
    path("", views.project_list, name="project_list"),
    path("p/<slug:slug>/", views.project_home, name="project_home"),
    path("new/", views.project_new, name="project_new"),
    path("p/<slug:slug>/settings/", views.project_settings, name="project_settings"),
    path("p/<slug:slug>/settings/model-endpoint/", views.model_endpoint, name="model_endpoint"),
    path("p/<slug:slug>/settings/model-endpoint/test/", views.model_endpoint_test, name="model_endpoint_test"),
    path("p/<slug:slug>/archive/", views.project_archive_view, name="project_archive"),
    path("p/<slug:slug>/jobs/<int:job_id>/", views.job_status, name="job_status"),
    path("p/<slug:slug>/jobs/<int:job_id>/retry/", views.job_retry_view, name="job_retry"),
    # People of a project, invitation links, one's own page and site accounts.
    path("p/<slug:slug>/people/", people_views.people_page, name="people"),
    path("p/<slug:slug>/people/import/", people_views.members_import, name="people_import"),
    path("p/<slug:slug>/people/<int:user_id>/roles/", people_views.member_roles, name="member_roles"),
    path("p/<slug:slug>/people/<int:user_id>/deactivate/", people_views.member_deactivate, name="member_deactivate"),
    path("p/<slug:slug>/invitations/", people_views.invitation_create, name="invitation_create"),
    path(
        "p/<slug:slug>/invitations/<int:invitation_id>/revoke/",
        people_views.invitation_revoke,
        name="invitation_revoke",
    ),
    path("join/<str:token>/", people_views.join, name="join"),
    path("me/", people_views.me, name="me"),
    path("me/token/", people_views.me_token_rotate, name="me_token_rotate"),
    path("me/token/revoke/", people_views.me_token_revoke, name="me_token_revoke"),
    path("site/accounts/", people_views.accounts, name="accounts"),
    path("site/accounts/<int:account_id>/active/", people_views.account_active, name="account_active"),
    path(
        "site/accounts/<int:account_id>/password-link/",
        people_views.account_password_link,
        name="account_password_link",
    ),
]
